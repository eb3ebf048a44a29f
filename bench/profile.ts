/**
 * Profiles iceguard under one benchmark workload: starts the stub and iceguard with
 * `--cpu-prof`, loads it with wrk (or the Node fallback), stops it so that V8 writes the
 * profile, then prints where the CPU time went — by function (self time) and by package.
 *
 *   node --import tsx bench/profile.ts [workload] [seconds]     (default load-small 5)
 *   workloads: load-small, load-large, data-commit, schema-commit, refused-commit
 *
 * The .cpuprofile file is kept in the temporary folder it names: open it in Chrome DevTools
 * (Performance → Load profile) or speedscope for a flame graph.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildForBench } from './lib/build.js'
import { runLoad } from './lib/load.js'
import { ALL_WORKLOADS, readOptions, type WorkloadName } from './lib/options.js'
import { summarise, type Profile } from './lib/cpu-profile.js'
import { firstJsonLine, freePort, killAll, nodeServer, pinned, start, stop, waitForPort } from './lib/processes.js'
import { buildWorkloads } from './lib/workloads.js'

const workloadName = (process.argv[2] ?? 'load-small') as WorkloadName
const seconds = Number(process.argv[3] ?? 5)
if (!ALL_WORKLOADS.includes(workloadName)) throw new Error(`unknown workload ${workloadName}; known: ${ALL_WORKLOADS.join(', ')}`)

async function main (): Promise<void> {
  const o = readOptions([])
  buildForBench()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'iceguard-profile-'))
  const [w] = buildWorkloads(dir, [workloadName])
  if (w === undefined) throw new Error('no workload')
  const stub = start('stub', pinned(nodeServer('bench/stub/upstream-stub.ts', ['--port', '0']), o.cpus.servers), { probe: true, logDir: dir })
  const stubPort = (await firstJsonLine(stub, 'port', 30_000)).port
  const port = await freePort()
  const ig = start('iceguard', pinned(nodeServer('src/main/server.ts',
    ['--upstream', `http://127.0.0.1:${String(stubPort)}`, '--port', String(port), '--host', '127.0.0.1', '--log-level', o.logLevel,
      '--state-dir', path.join(dir, 'iceguard-state')],
    ['--cpu-prof', '--cpu-prof-dir', dir]), o.cpus.servers), { probe: true, logDir: dir, env: { NODE_ENV: 'production' } })
  let from = 0
  let to = 0
  try {
    await waitForPort(ig, port, 60_000)
    const spec = { url: `http://127.0.0.1:${port}${w.path}`, method: w.method, ...(w.bodyFile === undefined ? {} : { bodyFile: w.bodyFile }), connections: o.connections, threads: o.threads, cpus: o.cpus.loader }
    await runLoad(o.loader, { ...spec, seconds: 1 })
    from = Number(process.hrtime.bigint() / 1000n)
    const r = await runLoad(o.loader, { ...spec, seconds })
    to = Number(process.hrtime.bigint() / 1000n)
    process.stderr.write(`${w.name}: ${r.requests} requests in ${(r.durationUs / 1e6).toFixed(1)} s, ${r.non2xx} non-2xx\n`)
  } finally {
    await stop(ig)
    await stop(stub)
  }
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the one serving requests (the
  // decision store's thread writes its own).
  const file = readdirSync(dir).find(f => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f)) ?? readdirSync(dir).find(f => f.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`no profile was written in ${dir}:\n${ig.output()}`)
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Profile
  process.stdout.write(`${summarise(profile, from, to)}\n\nProfile: ${path.join(dir, file)} (the whole life of the process)\n`)
}

main().catch(err => {
  process.stderr.write(`profile: ${(err as Error).stack ?? String(err)}\n`)
  killAll()
  process.exitCode = 1
})
