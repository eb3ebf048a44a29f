/**
 * `npm run bench`: what it costs to put iceguard in front of an Iceberg REST catalog.
 *
 * Starts an upstream stub, iceguard in front of it, and as yardsticks nginx (when installed),
 * a stock Fastify forwarder and a bare node:http + undici forwarder, then loads each in turn
 * with wrk (or a Node fallback): small and 1 MB loadTable, a fast-path data commit, a gated
 * schema commit and a refused one. Every pair of targets is measured back to back in the same
 * run, because only ratios mean something on a shared machine. Then a memory check (200
 * concurrent 1 MB loads), the evolution engine's benchmark (bench/engine.ts) and the gate's parts
 * in process (bench/gate-parts.ts).
 *
 * Writes bench/results/latest.md and latest.json; `--update-docs` also puts the table into
 * docs/performance.md. Settings: see lib/options.ts. Only 127.0.0.1 is ever contacted.
 */
import { spawnSync } from 'node:child_process'
import tls from 'node:tls'
import { Agent, setGlobalDispatcher } from 'undici'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildForBench } from './lib/build.js'
import { runLoad } from './lib/load.js'
import { countUpstream, measure, verify, type Cell } from './lib/measure.js'
import { readOptions, type Options, type Target } from './lib/options.js'
import { BENCH_DIR, PROJECT_DIR, killAll, sleep, stop, which } from './lib/processes.js'
import { judge, markdown, type EngineRun, type MemoryCheck, type RunReport } from './lib/report.js'
import { startStub, startTarget, usageOf, type Running } from './lib/targets.js'
import { buildWorkloads } from './lib/workloads.js'

const MB = 1048576
/** The workloads measured at one connection as well. */
const ONE_CONNECTION: readonly string[] = ['load-small', 'data-commit', 'schema-commit-small', 'data-commit-evolving', 'schema-commit']

/**
 * A key and self-signed certificate for the https stub, trusted by every process started from
 * here on (NODE_EXTRA_CA_CERTS: the proxies, the stub's clients, the loader) and by this one.
 */
function upstreamCertificate (dir: string): { key: string, cert: string } {
  const key = path.join(dir, 'stub-key.pem')
  const cert = path.join(dir, 'stub-cert.pem')
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=bench-stub', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' })
  if (r.status !== 0) throw new Error('BENCH_UPSTREAM_TLS=on needs openssl to make the stub\'s certificate')
  process.env.NODE_EXTRA_CA_CERTS = cert
  setGlobalDispatcher(new Agent({ connect: { ca: [...tls.rootCertificates, readFileSync(cert, 'utf8')] } }))
  return { key, cert }
}

function log (line: string): void {
  process.stderr.write(line + '\n')
}

function version (cmd: string, args: string[]): string | null {
  if (which(cmd) === null) return null
  const r = spawnSync(cmd, args, { encoding: 'utf8' })
  return `${r.stdout}${r.stderr}`.split('\n')[0]?.trim() || null
}

function machine (o: Options): RunReport['machine'] {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 1024 ** 3),
    kernel: os.release(),
    node: process.version,
    nginx: version('nginx', ['-v']),
    wrk: version('wrk', ['-v']),
    loader: o.loader === 'wrk' ? (version('wrk', ['-v'])?.split(' [')[0] ?? 'wrk') : 'the Node fallback loader',
    pinned: o.cpus.servers !== null,
    loadavgAtStart: os.loadavg().map(x => x.toFixed(2)).join(' ')
  }
}

function cellLine (c: Cell): string {
  const cpu = c.proxyCpuUs === null ? '' : `  proxy ${c.proxyCpuUs.toFixed(1)} µs/req`
  const errors = c.errors > 0 ? `  ERRORS ${c.errors}` : ''
  return `${c.workload.padEnd(15)} ${c.target.padEnd(9)} c=${String(c.connections).padEnd(3)} ${Math.round(c.rps).toString().padStart(7)} req/s  p50 ${c.p50Ms.toFixed(2)} ms  p99 ${c.p99Ms.toFixed(2)} ms${cpu}  upstream ${c.upstreamPerRequest.total.toFixed(2)}/req${errors}`
}

/** 200 concurrent 1 MB loads through iceguard, a few rounds: RSS must stay flat. */
async function memoryCheck (o: Options, iceguard: Running, responseBytes: number): Promise<MemoryCheck> {
  const before = await usageOf(iceguard, true)
  const out: MemoryCheck = { connections: o.memory.connections, seconds: o.memory.seconds, responseBytes, rssBeforeMb: (before?.rss ?? 0) / MB, rounds: [] }
  for (let i = 0; i < o.memory.rounds; i++) {
    await usageOf(iceguard, true)
    const r = await runLoad(o.loader, {
      url: `${iceguard.url}/v1/namespaces/bench/tables/large`,
      method: 'GET',
      seconds: o.memory.seconds,
      connections: o.memory.connections,
      threads: o.threads,
      cpus: o.cpus.loader
    })
    const during = await usageOf(iceguard)
    await sleep(1000)
    const after = await usageOf(iceguard)
    out.rounds.push({ peakRssMb: (during?.peakRss ?? 0) / MB, rssAfterMb: (after?.rss ?? 0) / MB, requests: r.requests, errors: r.non2xx + r.socketErrors + r.timeouts })
    log(`memory round ${i + 1}: ${r.requests} loads, peak RSS ${((during?.peakRss ?? 0) / MB).toFixed(0)} MB, after ${((after?.rss ?? 0) / MB).toFixed(0)} MB`)
  }
  return out
}

/** An in-process benchmark (the evolution engine's, the gate's parts): run as it is, output kept. */
function inProcessBench (name: string): EngineRun {
  const file = path.join(BENCH_DIR, name)
  const command = `node --import tsx bench/${name}`
  if (!existsSync(file)) return { command, ok: false, output: `bench/${name} does not exist` }
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: PROJECT_DIR, encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * MB })
  return { command, ok: r.status === 0, output: r.status === 0 ? r.stdout : `${r.stdout}\n${r.stderr}\n${r.error?.message ?? ''}` }
}

function writeResults (o: Options, report: RunReport): string {
  const dir = o.outDir ?? path.join(BENCH_DIR, 'results')
  mkdirSync(dir, { recursive: true })
  const md = markdown(report)
  writeFileSync(path.join(dir, 'latest.md'), `## iceguard benchmark\n\n${md}`)
  writeFileSync(path.join(dir, 'latest.json'), JSON.stringify(report, null, 2) + '\n')
  if (o.updateDocs) {
    const docs = path.join(PROJECT_DIR, 'docs', 'performance.md')
    const START = '<!-- bench:results:start -->'
    const END = '<!-- bench:results:end -->'
    const text = existsSync(docs) ? readFileSync(docs, 'utf8') : ''
    const a = text.indexOf(START)
    const b = text.indexOf(END)
    if (a === -1 || b < a) {
      log(`docs/performance.md has no ${START} … ${END} section: not updated`)
    } else {
      writeFileSync(docs, `${text.slice(0, a + START.length)}\n${md}${text.slice(b)}`)
      log('docs/performance.md updated')
    }
  }
  return md
}

async function main (): Promise<void> {
  const t0 = Date.now()
  const o = readOptions(process.argv.slice(2))
  const dir = mkdtempSync(path.join(os.tmpdir(), 'iceguard-bench-'))
  const stopAll = (): void => {
    killAll()
    rmSync(dir, { recursive: true, force: true })
  }
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      log(`\nbench: ${sig}, stopping every server it started`)
      stopAll()
      process.exit(130)
    })
  }
  process.once('exit', killAll)
  for (const n of o.notes) log(`bench: ${n}`)
  const compiled = buildForBench()
  log(`bench: compiled ${compiled} files into .bench-build/ (the servers run as plain JavaScript)`)
  if (o.baselineDir !== null) {
    log(`bench: baseline from ${o.baselineDir}: compiled ${buildForBench(o.baselineDir)} files into its .bench-build/`)
    o.notes.push(`the target baseline is iceguard from another checkout (BENCH_BASELINE_DIR=${path.basename(o.baselineDir)}), each cell measured right before iceguard's`)
  }
  if (o.iceguardDir !== null) {
    log(`bench: iceguard from ${o.iceguardDir}: compiled ${buildForBench(o.iceguardDir)} files into its .bench-build/`)
    o.notes.push(`iceguard ran from another checkout (BENCH_ICEGUARD_DIR=${path.basename(o.iceguardDir)})`)
  }
  const workloads = buildWorkloads(dir, o.workloads)
  const cells = o.oneConnectionOnly ? 0 : workloads.filter(w => w.latencyOnly !== true).reduce((n, w) => n + w.targets(o.targets).length, 0)
  const oneCells = workloads.filter(w => ONE_CONNECTION.includes(w.name))
    .reduce((n, w) => n + w.targets(o.targets).filter(t => t !== 'fastify' && t !== 'node').length, 0)
  const seconds = cells * (o.warmup + o.seconds + 0.5) + oneCells * (o.warmup + o.oneConnectionSeconds + 0.5) + 40
  log(`bench: ${cells} cells of ${o.warmup} + ${o.seconds} s at ${o.connections} connections and ${oneCells} of ${o.warmup} + ${o.oneConnectionSeconds} s at one, loader ${o.loader}${o.cpus.servers === null ? '' : ', pinned'}; about ${Math.ceil(seconds / 60)} min`)

  const report: Omit<RunReport, 'judgements'> = {
    started: new Date().toISOString(),
    elapsedS: 0,
    machine: machine(o),
    settings: { seconds: o.seconds, warmup: o.warmup, connections: o.connections, threads: o.threads, logLevel: o.logLevel },
    sizes: {},
    cells: [],
    latency: [],
    upstream: {},
    memory: null,
    engine: null,
    gateParts: null,
    verification: [],
    notes: [...o.notes]
  }
  if (process.env.BENCH_UPSTREAM_TLS === 'on') {
    o.upstreamTls = upstreamCertificate(dir)
    report.notes.push('the upstream stub speaks https (BENCH_UPSTREAM_TLS=on): every target reaches it over TLS')
  }
  const stub = await startStub(o, dir)
  report.sizes = { ...stub.sizes }
  for (const w of workloads) if (w.bodyBytes !== undefined) report.sizes[`${w.name} body`] = w.bodyBytes
  const running = new Map<Target, Running & { target: Target }>()
  try {
    for (const t of o.targets) {
      try {
        running.set(t, await startTarget(t, o, dir, stub.url) as Running & { target: Target })
      } catch (err) {
        if (t !== 'iceguard' && t !== 'baseline') throw err
        report.notes.push(`iceguard did not start, so only the references were measured: ${(err as Error).message.split('\n').slice(0, 6).join(' ')}`)
        log(`bench: iceguard did not start:\n${(err as Error).message}`)
      }
    }
    for (const w of workloads) {
      for (const t of w.targets(o.targets)) {
        const r = running.get(t)
        if (r === undefined || t === 'direct') continue
        const problems = await verify(w, r, stub.url)
        if (problems.length > 0 && t !== 'iceguard' && t !== 'baseline') throw new Error(`reference ${t} does not forward faithfully: ${problems.join('; ')}`)
        report.verification.push(...problems)
        for (const p of problems) log(`bench: WARNING ${p}`)
      }
    }
    const ig0 = running.get('iceguard')
    if (ig0 !== undefined) {
      for (const w of workloads.filter(x => x.method === 'POST')) {
        const u = await countUpstream(w, ig0, stub.url, 20)
        report.upstream[w.name] = u
        log(`${w.name.padEnd(15)} iceguard  upstream requests per commit: ${u.total.toFixed(2)} (${u.loadTable.toFixed(2)} loadTable, ${u.loadTableRefs.toFixed(2)} with snapshots=refs, ${u.notModified.toFixed(2)} answered 304; ${u.commit.toFixed(2)} commit)`)
      }
    }
    for (const w of workloads.filter(x => x.latencyOnly !== true && !o.oneConnectionOnly)) {
      for (const t of w.targets(o.targets)) {
        const r = running.get(t)
        if (r === undefined) continue
        const c = await measure(o, w, r, stub)
        report.cells.push(c)
        log(cellLine(c))
      }
    }
    const ig = running.get('iceguard')
    if (ig !== undefined) {
      // One connection, no queueing: the latency a client sees and each request's CPU when the
      // event loop has nothing else to do; a pause on iceguard's loop shows in p99 here.
      const one = { ...o, seconds: o.oneConnectionSeconds }
      for (const w of workloads.filter(x => ONE_CONNECTION.includes(x.name))) {
        for (const t of w.targets(o.targets).filter(x => x === 'direct' || x === 'nginx' || x === 'baseline' || x === 'iceguard')) {
          const r = running.get(t)
          if (r === undefined) continue
          const c = await measure(one, w, r, stub, 1)
          report.latency.push(c)
          log(cellLine(c))
        }
      }
      if (o.memory.enabled) report.memory = await memoryCheck(o, ig, stub.sizes.large ?? MB)
    }
  } finally {
    for (const r of running.values()) if (r.server !== null) await stop(r.server)
    if (stub.server !== null) await stop(stub.server)
    rmSync(dir, { recursive: true, force: true })
  }
  if (o.engine) {
    log('bench: evolution engine benchmark (bench/engine.ts)')
    report.engine = inProcessBench('engine.ts')
    log('bench: the gate\'s parts in process (bench/gate-parts.ts)')
    report.gateParts = inProcessBench('gate-parts.ts')
  }
  report.elapsedS = (Date.now() - t0) / 1000
  const full: RunReport = { ...report, judgements: judge(report) }
  const md = writeResults(o, full)
  process.stdout.write(md)
  log(`bench: results in ${path.relative(process.cwd(), o.outDir ?? path.join(BENCH_DIR, 'results'))}/latest.md and latest.json (${Math.round(full.elapsedS)} s)`)
}

main().catch(err => {
  log(`bench: ${(err as Error).stack ?? String(err)}`)
  killAll()
  process.exitCode = 1
})
