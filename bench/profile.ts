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
import { PROJECT_DIR, firstJsonLine, freePort, killAll, nodeServer, pinned, start, stop, waitForPort } from './lib/processes.js'
import { buildWorkloads } from './lib/workloads.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  hitCount?: number
  children?: number[]
}
interface Profile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }

const workloadName = (process.argv[2] ?? 'load-small') as WorkloadName
const seconds = Number(process.argv[3] ?? 5)
if (!ALL_WORKLOADS.includes(workloadName)) throw new Error(`unknown workload ${workloadName}; known: ${ALL_WORKLOADS.join(', ')}`)

/** Where a frame's code comes from: a package, Node itself, V8, or a project file. */
function origin (url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : '(native/V8)'
  const nm = url.lastIndexOf('node_modules/')
  if (nm !== -1) {
    const rest = url.slice(nm + 13).split('/')
    return rest[0]?.startsWith('@') === true ? `${rest[0]}/${rest[1] ?? ''}` : rest[0] ?? url
  }
  if (url.startsWith('node:')) return 'node (internals)'
  const rel = url.replace(/^file:\/\//, '')
  // Servers run from the compiled copy in .bench-build/ (lib/build.ts): name the source file.
  return rel.startsWith(PROJECT_DIR) ? path.relative(PROJECT_DIR, rel).replace(/^\.bench-build\//, '') : rel
}

/** Self time of the samples taken between `from` and `to` (µs, the monotonic clock V8 and Node share). */
function summarise (p: Profile, from: number, to: number): string {
  const nodes = new Map(p.nodes.map(n => [n.id, n]))
  const hits = new Map<number, number>()
  let t = p.startTime
  let total = 0
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0
    if (t < from || t > to) continue
    const id = p.samples[i] ?? 0
    hits.set(id, (hits.get(id) ?? 0) + 1)
    total++
  }
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const label = (n: ProfileNode): string => {
    const o = origin(n.callFrame.url, n.callFrame.functionName)
    return `${n.callFrame.functionName || '(anonymous)'}  ${o}${n.callFrame.url === '' ? '' : `:${n.callFrame.lineNumber + 1}`}`
  }
  // Inclusive time of the project's own functions (and the packages it calls into): each
  // sample counts once for every distinct function on its stack.
  const inclusive = new Map<string, number>()
  for (const [id, h] of hits) {
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = nodes.get(cur)
      if (n === undefined) break
      const o = origin(n.callFrame.url, n.callFrame.functionName)
      if (!(o.startsWith('src/') || o.startsWith('routes/'))) continue
      const key = label(n)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + h)
    }
  }
  const byFn = new Map<string, number>()
  const byOrigin = new Map<string, number>()
  for (const [id, h] of hits) {
    const n = nodes.get(id)
    if (n === undefined) continue
    const o = origin(n.callFrame.url, n.callFrame.functionName)
    const key = `${n.callFrame.functionName || '(anonymous)'}  ${o}${n.callFrame.url === '' ? '' : `:${n.callFrame.lineNumber + 1}`}`
    byFn.set(key, (byFn.get(key) ?? 0) + h)
    const group = o.startsWith('src/') || o.startsWith('routes/') ? o.split('/').slice(0, 2).join('/') : o
    byOrigin.set(group, (byOrigin.get(group) ?? 0) + h)
  }
  const pct = (h: number): string => `${(100 * h / total).toFixed(1).padStart(5)}%`
  const lines = [`${total} samples during the measured ${((to - from) / 1e6).toFixed(1)} s`, '', 'Self time by origin:']
  for (const [k, v] of [...byOrigin].sort((a, b) => b[1] - a[1]).slice(0, 20)) lines.push(`  ${pct(v)}  ${k}`)
  lines.push('', 'Inclusive time of project functions (top 25):')
  for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`  ${pct(v)}  ${k}`)
  lines.push('', 'Self time by function (top 30):')
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30)) lines.push(`  ${pct(v)}  ${k}`)
  return lines.join('\n')
}

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
