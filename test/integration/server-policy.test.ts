/**
 * The policy in the real process: a bad file stops start-up with every error and its line; SIGHUP
 * and a file change reload it without a restart; a bad reload keeps the last good policy.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { IcebergRestCatalog } from 'iceberg-js'
import t from 'tap'
import { request } from 'undici'
import { startCatalog, startProxy } from '../helpers/index.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, postJson, posts, startInterposer } from '../helpers/gate-fixtures.js'

const root = new URL('../..', import.meta.url).pathname

function startServer (args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts', '--port', '0', '--host', '127.0.0.1', '--memory', ...args], {
    cwd: root,
    env: { ...process.env, ICEGUARD_UPSTREAM_URL: '' },
    stdio: ['pipe', 'pipe', 'pipe']
  })
}

function waitFor (child: ChildProcessWithoutNullStreams, pattern: RegExp, from: () => string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const m = pattern.exec(from())
      if (m !== null) { cleanup(); resolve(m) }
    }
    const onExit = (code: number | null): void => { cleanup(); reject(new Error(`exited ${code}: ${from()}`)) }
    const timer = setTimeout(() => { cleanup(); reject(new Error(`timed out waiting for ${pattern}: ${from()}`)) }, 90_000)
    const cleanup = (): void => {
      clearTimeout(timer)
      child.stdout.off('data', check)
      child.off('exit', onExit)
    }
    child.stdout.on('data', check)
    child.on('exit', onExit)
    check()
  })
}

async function effectiveMode (url: string): Promise<string> {
  const res = await fetch(`${url}/admin/v1/policy/effective?table=staging.events`)
  const body = await res.json() as { mode: { value: string } }
  return body.mode.value
}

t.test('a bad policy file stops start-up and names every error with its line and column', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-policy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'policy.yaml')
  writeFileSync(file, 'version: 1\nmode: enforced\nrules:\n  NO_SUCH_RULE: error\n')
  const child = startServer(['--policy', file])
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.equal(code, 2, 'the process does not start')
  t.match(err, /policy\.yaml:2:\d+/, 'the bad mode is named with its line')
  t.match(err, /policy\.yaml:4:\d+/, 'the unknown rule is named with its line')
  t.match(err, /NO_SUCH_RULE/)
})

t.test('SIGHUP and file changes reload the policy; a bad reload keeps the last good one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-policy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'policy.yaml')
  writeFileSync(file, 'version: 1\nmode: enforce\n')
  const child = startServer(['--policy', file])
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  const [, url] = await waitFor(child, /Server listening at (http:\/\/127\.0\.0\.1:\d+)/, () => out)
  if (url === undefined) throw new Error('no listen address')
  t.equal(await effectiveMode(url), 'enforce')

  // A good edit: seen through the file watcher or SIGHUP, whichever comes first; both reload.
  writeFileSync(file, 'version: 1\nmode: warn\n')
  child.kill('SIGHUP')
  await waitFor(child, /policy reloaded/, () => out)
  t.equal(await effectiveMode(url), 'warn', 'the new mode applies without a restart')

  // A bad edit: the error is logged and the last good policy stays in force.
  const before = out.length
  writeFileSync(file, 'version: 1\nmode: [not, a, mode]\n')
  child.kill('SIGHUP')
  await waitFor(child, /Kept the previous policy/, () => out.slice(before))
  t.equal(await effectiveMode(url), 'warn', 'the previous policy is kept')
  t.equal(child.exitCode, null, 'the server is still running')

  child.kill('SIGTERM')
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.equal(code, 0)
})

t.test('a reload never drops or re-judges a commit already in flight', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-policy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'policy.yaml')
  writeFileSync(file, 'version: 1\nmode: enforce\n')
  const catalog = await startCatalog(t)
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 't', 2)
  // The hop holds the commit's POST after the gate has judged it, until one more GET goes by.
  const hop = await startInterposer(t, catalog.url, { holdPostsUntilGets: 2 })
  const proxy = await startProxy(t, { upstream: hop.url, policy: file, env: { ICEGUARD_ADMIN_TOKEN: 'admin-token-for-tests' } })
  let meta = await loadMeta(catalog.url, 'db', 't')
  catalog.clearRequests()
  const addColumn = (name: string): unknown => {
    const schema = cloneSchema(meta)
    schema.fields.push({ id: meta['last-column-id'] + 1, name, required: false, type: 'string', doc: 'added in a test' })
    return clientShapes.java(meta, schema, 'db', 't')
  }

  hop.arm()
  const inFlight = postJson(`${proxy.url}/v1/namespaces/db/tables/t`, addColumn('note'))
  // Wait until the commit itself reaches the hop (judged and on its way; the hop holds it), then
  // freeze. Waiting only for the base load raced: the reload could land before the judgement.
  while (!hop.seen.some(r => r.method === 'POST')) await new Promise(resolve => setTimeout(resolve, 10))
  writeFileSync(file, 'version: 1\nmode: freeze\n')
  const reload = await postJson(`${proxy.url}/admin/v1/policy/reload`, '', { authorization: 'Bearer admin-token-for-tests' })
  t.equal(reload.status, 200, 'the reload is taken while the commit waits')
  await request(`${proxy.url}/v1/namespaces/db/tables/t`).then(async res => await res.body.text())

  const first = await inFlight
  t.equal(first.status, 200, 'the in-flight commit completes under the policy that judged it')
  t.equal(posts(catalog).length, 1, 'and reached the catalog once')

  meta = await loadMeta(catalog.url, 'db', 't')
  const second = await postJson(`${proxy.url}/v1/namespaces/db/tables/t`, addColumn('later'))
  t.equal(second.status, 400, 'the next commit is judged by the reloaded policy')
  t.match((second.json as { error: { message: string } }).error.message, /TABLE_FROZEN/)
  t.equal(posts(catalog).length, 1, 'and never reaches the catalog')
})
