/**
 * The CLI installs the way a CI job installs it: `npm pack` (which runs `prepare`, the build), then
 * `npm install --save-dev ./iceguard-x.tgz` in a project and `npm install -g` of the same tarball,
 * and the installed `iceguard` runs. The dependencies come from npm's cache (`--offline`); when the
 * cache lacks them the registry is asked, and where it cannot be reached the install checks are
 * skipped, saying so (required when CI is set). better-sqlite3's prebuilt binary is offered the way
 * prebuild-install finds one (helpers/prebuilt-binary.ts), as a CI job with a network gets it from
 * the release, instead of compiling SQLite from source in each install.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { EXIT } from '../../src/cli/exit-codes.js'
import { compiledFromSource, offerPrebuild } from '../helpers/prebuilt-binary.js'
import { inCi } from '../helpers/system-tool.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixture = (name: string): string => join(root, 'test/fixtures/cli', name)

/**
 * npm's own settings from the `npm test` that started this file (`npm_config_*`, the project's
 * prefix among them) would make the nested npm act on this repository; only the user's choice of
 * cache, registry and config file carries over.
 */
function cleanEnv (): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig'])
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !keep.has(k.toLowerCase())) continue
    if (k === 'INIT_CWD') continue
    env[k] = v
  }
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
}
let env = cleanEnv()

interface Run { code: number, stdout: string, stderr: string }
function run (cmd: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

/** npm's error codes for "the registry could not be reached" (and, with --offline, "not in the cache"). */
const UNREACHABLE = /\b(ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/

/** Installs from the cache; asks the registry only for what the cache lacks. */
async function npmInstall (cwd: string, args: string[]): Promise<{ result: Run, unreachable: boolean }> {
  const offline = await run('npm', ['install', '--offline', ...args], cwd)
  if (offline.code === 0 || !/ENOTCACHED/.test(offline.stderr)) return { result: offline, unreachable: false }
  // Without a network npm would retry each request for minutes: one try, and a bound per request.
  const online = await run('npm', ['install', '--prefer-offline', '--fetch-retries=0', '--fetch-timeout=60000', ...args], cwd)
  return { result: online, unreachable: online.code !== 0 && UNREACHABLE.test(online.stderr) }
}

/** Asserts a command succeeded; its stderr is shown only when it did not. */
function succeeded (t: Test, r: Run, what: string): void {
  if (r.code !== 0) t.comment(r.stderr.slice(-4000))
  t.equal(r.code, 0, what)
}

t.test('the packed CLI installs into a project and globally, and runs', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'iceguard-install-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  env = { ...env, ...await offerPrebuild(join(root, 'node_modules', 'better-sqlite3'), join(work, 'prebuilds')) }

  const packed = await run('npm', ['pack', '--json', '--pack-destination', work], root)
  succeeded(t, packed, 'npm pack (its prepare script builds)')
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string, files: Array<{ path: string, mode: number }> }>
  const tarball = join(work, info!.filename)
  const files = new Map(info!.files.map(f => [f.path, f.mode]))
  const bin = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: { iceguard: string } }).bin.iceguard
  t.ok(files.has(bin), `the tarball holds the bin, ${bin}`)
  t.equal((files.get(bin) ?? 0) & 0o111, 0o111, 'executable')
  t.ok(files.has('dist/src/main/server.js'), 'and the server')
  t.ok(files.has('docs/rules.md'), 'and docs/rules.md, which GET /rules/{RULE_ID} renders')
  t.notOk([...files.keys()].some(p => /^(src|test|bench|scripts)\//.test(p) || p.endsWith('.ts') || p.endsWith('.map')), 'no sources, tests or source maps')
  t.ok(readFileSync(join(root, bin), 'utf8').startsWith('#!/usr/bin/env node\n'), 'the built bin starts with a node shebang')

  // A CI job's project: the CLI as a dev dependency.
  const project = join(work, 'ci-job')
  mkdirSync(project)
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'ci-job', private: true }))
  const installed = await npmInstall(project, ['--save-dev', tarball])
  if (installed.unreachable && !inCi()) {
    t.test('installing the tarball', { skip: `the npm cache lacks iceguard's dependencies and the registry is unreachable (${UNREACHABLE.exec(installed.result.stderr)?.[1]}); runs online or with a warm cache, required when CI is set` }, async () => {})
    return
  }
  succeeded(t, installed.result, `npm install --save-dev ${info!.filename}`)
  if (installed.result.code !== 0) return
  const local = join(project, 'node_modules', '.bin', 'iceguard')
  t.ok(existsSync(local), 'node_modules/.bin/iceguard exists')

  const help = await run(local, ['--help'], project)
  succeeded(t, help, 'iceguard --help')
  t.match(help.stdout, /^Usage: iceguard <command>/, 'the bin runs by its shebang')
  const check = await run(local, ['check', '--table', 'db.orders', '--metadata', fixture('table-metadata.json'), '--request', fixture('narrow-type.json'), '--format', 'github'], project)
  t.equal(check.code, EXIT.DENY, 'a narrowing exits 1')
  t.match(check.stdout, /^::error file=.*narrow-type\.json,line=7,title=TYPE_PROMOTION_VALID/m)
  const npx = await run('npx', ['--no-install', 'iceguard', '--help'], project)
  succeeded(t, npx, 'npx --no-install iceguard finds the project\'s copy')
  t.match(npx.stdout, /^Usage: iceguard <command>/)

  // The same tarball installed globally (a prefix of its own stands for the machine's).
  const prefix = join(work, 'global')
  mkdirSync(join(prefix, 'lib'), { recursive: true })
  const global = await npmInstall(work, ['-g', '--prefix', prefix, tarball])
  succeeded(t, global.result, `npm install -g ${info!.filename}`)
  const globalBin = join(prefix, 'bin', 'iceguard')
  t.ok(existsSync(globalBin) && (statSync(globalBin).mode & 0o111) !== 0, 'bin/iceguard is on the prefix\'s PATH')
  const globalCheck = await run(globalBin, ['check', '--table', 'db.orders', '--metadata', fixture('table-metadata.json'), '--request', fixture('add-optional-column.json')], work)
  succeeded(t, globalCheck, 'the global iceguard judges an allowed change')
  t.match(globalCheck.stdout, /^db\.orders: allow/)
  for (const dir of [join(project, 'node_modules', 'better-sqlite3'), join(prefix, 'lib', 'node_modules', 'iceguard', 'node_modules', 'better-sqlite3')]) {
    if (compiledFromSource(dir)) t.comment(`${dir} was compiled from source: the install resolved a better-sqlite3 other than this checkout's`)
  }
})
