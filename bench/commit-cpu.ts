/**
 * iceguard's CPU per request at one connection, measured inside iceguard's own process
 * (process.cpuUsage, every thread: the decision store's too), for the whole path of a schema
 * commit on the 50-column table with 20 schemas of history: the fast lane's triage, the base's
 * conditional load (a 304: the parsed base comes from the ETag cache), the judgement, the
 * requirement added to the body, the forwarded commit, the audit line and the decision stored in
 * the SQLite file. Beside it, in the same rounds, a small load and a data commit on the same table
 * through the same lane: what any request costs, the baseline the gate's own cost stands on.
 *
 *   node --import tsx bench/commit-cpu.ts [--requests 400] [--rounds 6] [--baseline ../other-checkout] [--profile]
 *
 * The upstream is the benchmark's stub and the requests come from this process (one keep-alive
 * connection, each request sent when the last was answered), so neither's CPU is counted: the
 * figure is iceguard's alone and is little disturbed by the rest of a busy machine, unlike latency.
 * With --baseline another checkout (with its node_modules) runs beside this one, over the same stub,
 * and the rounds alternate between the two (A B, B A, …). --profile runs this checkout's iceguard
 * under `--cpu-prof` and prints where the schema commits' CPU went (self time by origin, file and
 * function); its own figures are then inflated by the profiler.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Client } from 'undici'
import { summariseWindows, type Profile } from './lib/cpu-profile.js'
import { dataCommit, schemaCommit, type TableOptions } from './lib/fixtures.js'
import { BENCH_DIR, PROJECT_DIR, firstJsonLine, killAll, start, stop, type Server } from './lib/processes.js'

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '6' },
    baseline: { type: 'string' },
    profile: { type: 'boolean', default: false }
  }
})
const requests = Number(values.requests)
const rounds = Number(values.rounds)

// The stub's tables (bench/stub/upstream-stub.ts builds the same ones).
const EVOLVING: TableOptions = { table: 'evolving', columns: 50, snapshots: 3, schemas: 20 }
const TABLES = '/v1/namespaces/bench/tables'

interface Workload { name: string, method: 'GET' | 'POST', path: string, body?: Buffer }
const workloads: Workload[] = [
  { name: 'load-small', method: 'GET', path: `${TABLES}/small` },
  { name: 'data-commit-evolving', method: 'POST', path: `${TABLES}/evolving`, body: Buffer.from(dataCommit(EVOLVING, 5 * 1024)) },
  { name: 'schema-commit', method: 'POST', path: `${TABLES}/evolving`, body: Buffer.from(schemaCommit(EVOLVING, 'add-optional-column')) }
]

interface Build { name: string, checkout: string, server?: Server, client?: Client, profileDir?: string }

/** The next IPC message from `server` holding `key`, after sending it `cmd`. */
async function ask (server: Server, cmd: string | null, key: string): Promise<Record<string, unknown>> {
  return await new Promise((resolve, reject) => {
    const onMessage = (m: Record<string, unknown>): void => {
      if (!(key in m)) return
      server.child.off('message', onMessage)
      server.child.off('exit', onExit)
      resolve(m)
    }
    const onExit = (): void => reject(new Error(`${server.name} exited:\n${server.output()}`))
    server.child.on('message', onMessage)
    server.child.once('exit', onExit)
    if (cmd !== null) server.child.send({ cmd })
  })
}

async function send (client: Client, w: Workload): Promise<void> {
  const res = await client.request({ method: w.method, path: w.path, ...(w.body === undefined ? {} : { body: w.body, headers: { 'content-type': 'application/json' } }) })
  await res.body.arrayBuffer()
  if (res.statusCode !== 200) throw new Error(`${w.name}: status ${res.statusCode}`)
}

/** CPU µs per request of `n` requests of `w`, as the server counted it, and the window measured. */
async function measure (b: Build, w: Workload, n: number): Promise<{ us: number, mainUs: number, window: [number, number] }> {
  const server = b.server as Server
  const client = b.client as Client
  await ask(server, 'start', 'started')
  for (let i = 0; i < n; i++) await send(client, w)
  const r = await ask(server, 'stop', 'cpuUs')
  return { us: (r.cpuUs as number) / n, mainUs: typeof r.mainUs === 'number' ? r.mainUs / n : NaN, window: [r.from as number, r.to as number] }
}

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] as number : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

async function main (): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'iceguard-commit-cpu-'))
  const stub = start('stub', [process.execPath, '--import', 'tsx', path.join(BENCH_DIR, 'stub/upstream-stub.ts'), '--port', '0'], { logDir: dir, env: { NODE_ENV: 'production' } })
  const upstream = `http://127.0.0.1:${String((await firstJsonLine(stub, 'port', 30_000)).port)}`
  const builds: Build[] = [{ name: 'this checkout', checkout: PROJECT_DIR }]
  const schemaWindows: Array<[number, number]> = []
  if (values.baseline !== undefined) builds.unshift({ name: 'baseline', checkout: path.resolve(values.baseline) })
  try {
    for (const [i, b] of builds.entries()) {
      const profile = values.profile && b.checkout === PROJECT_DIR
      if (profile) b.profileDir = path.join(dir, 'profile')
      b.server = start(`iceguard-${i}`, [process.execPath, '--import', 'tsx',
        ...(b.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', b.profileDir]),
        path.join(BENCH_DIR, 'lib/commit-cpu-server.ts'), b.checkout, upstream, path.join(dir, `state-${i}`)],
      { probe: true, logDir: dir, env: { NODE_ENV: 'production' } })
      const url = (await ask(b.server, null, 'url')).url as string
      b.client = new Client(url, { pipelining: 1 })
      // Warm-up: V8 compiles the hot paths, the caches fill.
      for (const w of workloads) for (let k = 0; k < requests; k++) await send(b.client, w)
    }
    const figures = new Map<string, number[]>()
    const mainFigures = new Map<string, number[]>()
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? builds : [...builds].reverse()
      const line: string[] = []
      for (const w of workloads) {
        for (const b of order) {
          const { us, mainUs, window } = await measure(b, w, requests)
          const key = `${b.name}|${w.name}`
          figures.set(key, [...(figures.get(key) ?? []), us])
          mainFigures.set(key, [...(mainFigures.get(key) ?? []), mainUs])
          if (b.profileDir !== undefined && w.name === 'schema-commit') schemaWindows.push(window)
          line.push(`${w.name} ${b.name} ${us.toFixed(0)}`)
        }
      }
      process.stderr.write(`round ${r + 1}: ${line.join(', ')}\n`)
    }
    process.stdout.write(`iceguard CPU µs per request at one connection, ${rounds} rounds of ${requests} requests (median, range)\n`)
    const head = ['workload', ...builds.map(b => b.name)]
    if (builds.length === 2) head.push('this / baseline')
    const rows = [head]
    for (const w of workloads) {
      const row = [w.name]
      const medians = builds.map(b => {
        const xs = figures.get(`${b.name}|${w.name}`) ?? []
        row.push(`${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`)
        return median(xs)
      })
      if (builds.length === 2) row.push(((medians[1] as number) / (medians[0] as number)).toFixed(2))
      rows.push(row)
    }
    const gateRow = ['schema − data commit (the gate)']
    const gate = builds.map(b => {
      const per = (name: string): number[] => figures.get(`${b.name}|${name}`) ?? []
      const s = per('schema-commit')
      const d = per('data-commit-evolving')
      const diffs = s.map((x, k) => x - (d[k] ?? 0))
      gateRow.push(`${median(diffs).toFixed(0)} (${Math.min(...diffs).toFixed(0)}–${Math.max(...diffs).toFixed(0)})`)
      return median(diffs)
    })
    if (builds.length === 2) gateRow.push(((gate[1] as number) / (gate[0] as number)).toFixed(2))
    rows.push(gateRow)
    // The serving thread's share, from Linux's per-thread accounting (10 ms ticks): the rest is
    // the decision store's thread, V8's garbage collection helpers and the module loader's.
    for (const w of workloads) {
      const row = [`  ${w.name}, serving thread only`]
      for (const b of builds) row.push(median(mainFigures.get(`${b.name}|${w.name}`) ?? []).toFixed(0))
      rows.push(row)
    }
    const widths = head.map((_, c) => Math.max(...rows.map(row => (row[c] ?? '').length)))
    for (const row of rows) process.stdout.write(`${row.map((cell, c) => c === 0 ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number)).join('  ')}\n`)
  } finally {
    for (const b of builds) {
      await b.client?.close()
      if (b.server === undefined) continue
      const exited = b.server.exited
      b.server.child.send({ cmd: 'close' })
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
      await stop(b.server)
    }
    await stop(stub)
    // The decision files and logs go; a profile stays where it says.
    if (!values.profile) rmSync(dir, { recursive: true, force: true })
  }
  const profiled = builds.find(b => b.profileDir !== undefined)?.profileDir
  if (profiled !== undefined) {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 serves requests.
    const file = readdirSync(profiled).find(f => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    if (file === undefined) throw new Error(`no profile was written in ${profiled}`)
    const profile = JSON.parse(readFileSync(path.join(profiled, file), 'utf8')) as Profile
    process.stdout.write(`\nWhere the schema commits' CPU went (main thread):\n${summariseWindows(profile, schemaWindows)}\n\nProfile: ${path.join(profiled, file)}\n`)
  }
}

main().catch(err => {
  process.stderr.write(`commit-cpu: ${(err as Error).stack ?? String(err)}\n`)
  killAll()
  process.exitCode = 1
})
