/**
 * Settings of a benchmark run: environment variables (all optional), a few flags.
 *
 *   BENCH_SECONDS=4 BENCH_WARMUP=1 BENCH_CONNECTIONS=32 BENCH_THREADS=2
 *   BENCH_TARGETS=direct,nginx,fastify,node,iceguard   (nginx is dropped when not installed)
 *   BENCH_WORKLOADS=load-small,load-small-warm,load-large,data-commit,data-commit-warm,data-commit-evolving,schema-commit,schema-commit-small,refused-commit
 *   BENCH_PIN=auto|on|off     auto: pin when taskset exists and there are ≥ 2 CPUs
 *   BENCH_LOADER=wrk|node     default wrk when installed
 *   BENCH_LOG_LEVEL=warn      iceguard's --log-level during the run
 *   BENCH_QUIET_WAIT=0        before each cell, wait up to this many seconds for other
 *                             processes to use < 10% of a core (shared machines)
 *   BENCH_MEMORY_CONNECTIONS=200 BENCH_MEMORY_ROUNDS=2 BENCH_MEMORY_SECONDS=3
 *   BENCH_ICEGUARD_CMD='…'    run another build of iceguard ({UPSTREAM} and {PORT} are replaced)
 *   BENCH_ICEGUARD_DIR=../b   another checkout of iceguard (its node_modules installed), compiled and
 *                             started exactly as this one is (probe, pinning): builds A and B compared
 *   BENCH_BASELINE_DIR=../a   another checkout run beside this one as the target `baseline`, each of its
 *                             cells measured right before iceguard's (A B in the same minute, not in
 *                             different runs): before/after comparisons on a busy machine
 *   BENCH_ONE_CONNECTION_SECONDS=8   length of each one-connection cell (default: BENCH_SECONDS)
 *   BENCH_UPSTREAM_TLS=on     the stub speaks https with a certificate made for the run (openssl),
 *                             trusted by every process through NODE_EXTRA_CA_CERTS
 *   flags: --quick (2 s cells, no in-process benchmarks), --no-engine (neither engine.ts nor gate-parts.ts), --no-memory,
 *          --one-connection (only the one-connection cells: no throughput cells, memory check or engine),
 *          --update-docs (write the table into docs/performance.md), --out DIR
 */
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { which } from './processes.js'

export const ALL_TARGETS = ['direct', 'nginx', 'fastify', 'node', 'baseline', 'iceguard'] as const
export type Target = typeof ALL_TARGETS[number]
export const ALL_WORKLOADS = ['load-small', 'load-small-warm', 'load-large', 'data-commit', 'data-commit-warm', 'data-commit-evolving', 'schema-commit', 'schema-commit-small', 'refused-commit'] as const
export type WorkloadName = typeof ALL_WORKLOADS[number]

export interface Options {
  seconds: number
  warmup: number
  connections: number
  threads: number
  targets: Target[]
  workloads: WorkloadName[]
  loader: 'wrk' | 'node'
  /** CPU lists for taskset, or null (no pinning) */
  cpus: { loader: string | null, servers: string | null }
  logLevel: string
  /** seconds to wait, at most, before each cell for the rest of the machine to go quiet */
  quietWait: number
  memory: { enabled: boolean, connections: number, rounds: number, seconds: number }
  engine: boolean
  updateDocs: boolean
  outDir: string | null
  iceguardCmd: string | null
  /** Another checkout whose src/ is compiled and run in place of this one's, or null. */
  iceguardDir: string | null
  /** Another checkout measured as the target `baseline`, or null. */
  baselineDir: string | null
  /** Only the one-connection cells. */
  oneConnectionOnly: boolean
  /** Seconds of each one-connection cell. */
  oneConnectionSeconds: number
  /** PEM files of the https stub's key and certificate, or null for a plain-HTTP stub (set by run.ts). */
  upstreamTls: { key: string, cert: string } | null
  notes: string[]
}

function num (name: string, fallback: number): number {
  const v = process.env[name]
  if (v === undefined || v.trim() === '') return fallback
  const n = Number(v)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: "${v}" is not a positive number`)
  return n
}

function list<T extends string> (name: string, all: readonly T[]): T[] {
  const v = process.env[name]
  if (v === undefined || v.trim() === '') return [...all]
  const picked = v.split(',').map(s => s.trim()).filter(Boolean)
  for (const p of picked) if (!all.includes(p as T)) throw new Error(`${name}: unknown "${p}"; known: ${all.join(', ')}`)
  // Keep the canonical order: direct first, iceguard last, so that every pair is measured back to back.
  return all.filter(a => picked.includes(a))
}

export function readOptions (argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean' },
      'no-engine': { type: 'boolean' },
      'no-memory': { type: 'boolean' },
      'update-docs': { type: 'boolean' },
      'one-connection': { type: 'boolean' },
      out: { type: 'string' }
    }
  })
  const quick = values.quick === true
  const oneConnectionOnly = values['one-connection'] === true
  const seconds = quick ? 2 : num('BENCH_SECONDS', 4)
  const notes: string[] = []
  const targets = list('BENCH_TARGETS', ALL_TARGETS)
  if (targets.includes('nginx') && which('nginx') === null) {
    targets.splice(targets.indexOf('nginx'), 1)
    notes.push('nginx is not installed: the nginx reference and the iceguard/nginx ratios are missing (apt-get install nginx-light)')
  }
  const baselineDir = process.env.BENCH_BASELINE_DIR === undefined || process.env.BENCH_BASELINE_DIR === '' ? null : path.resolve(process.env.BENCH_BASELINE_DIR)
  if (baselineDir === null && targets.includes('baseline')) targets.splice(targets.indexOf('baseline'), 1)
  if (baselineDir !== null && !targets.includes('baseline')) targets.splice(targets.indexOf('iceguard'), 0, 'baseline')
  let loader = (process.env.BENCH_LOADER ?? 'wrk') as 'wrk' | 'node'
  if (loader !== 'wrk' && loader !== 'node') throw new Error('BENCH_LOADER must be wrk or node')
  if (loader === 'wrk' && which('wrk') === null) {
    loader = 'node'
    notes.push('wrk is not installed: load came from the Node fallback loader, which takes more of the CPU the servers share (apt-get install wrk)')
  }
  const pin = process.env.BENCH_PIN ?? 'auto'
  const canPin = which('taskset') !== null && os.cpus().length >= 2
  const doPin = pin === 'on' || (pin === 'auto' && canPin)
  if (pin === 'on' && !canPin) throw new Error('BENCH_PIN=on needs taskset and at least 2 CPUs')
  if (!doPin) notes.push('servers and load generator were not pinned to CPUs: figures are noisier')
  return {
    seconds,
    warmup: quick ? 1 : num('BENCH_WARMUP', 1),
    connections: num('BENCH_CONNECTIONS', 32),
    threads: num('BENCH_THREADS', 2),
    targets,
    workloads: list('BENCH_WORKLOADS', ALL_WORKLOADS),
    loader,
    // Loader on CPU 0, upstream stub and proxy on CPU 1: the loader never takes CPU from the
    // proxy, and throughput reads off the server-side cost per request.
    cpus: doPin ? { loader: '0', servers: '1' } : { loader: null, servers: null },
    logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
    quietWait: process.env.BENCH_QUIET_WAIT === '0' ? 0 : num('BENCH_QUIET_WAIT', 0),
    memory: {
      enabled: values['no-memory'] !== true && !oneConnectionOnly,
      connections: num('BENCH_MEMORY_CONNECTIONS', 200),
      rounds: num('BENCH_MEMORY_ROUNDS', 2),
      seconds: quick ? 2 : num('BENCH_MEMORY_SECONDS', 3)
    },
    engine: values['no-engine'] !== true && !quick && !oneConnectionOnly,
    updateDocs: values['update-docs'] === true,
    outDir: values.out ?? null,
    iceguardCmd: process.env.BENCH_ICEGUARD_CMD ?? null,
    iceguardDir: process.env.BENCH_ICEGUARD_DIR === undefined || process.env.BENCH_ICEGUARD_DIR === '' ? null : path.resolve(process.env.BENCH_ICEGUARD_DIR),
    baselineDir,
    oneConnectionOnly,
    oneConnectionSeconds: num('BENCH_ONE_CONNECTION_SECONDS', seconds),
    upstreamTls: null,
    notes
  }
}
