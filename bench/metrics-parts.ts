/**
 * What counting a request costs, in-process: a prom-client series bound with `labels()` against
 * iceguard's bound series (src/metrics/hot-series.ts), for the three series every request touches
 * (request counter, answer histogram, upstream histogram), and the tracing check a gated write
 * makes when no SDK is set up.
 *
 *   node --import tsx bench/metrics-parts.ts
 *
 * Figures are CPU ns per call (process.cpuUsage), the best of several rounds; the ratio is of two
 * rows of the same run.
 */
import { Counter, Histogram, Registry } from 'prom-client'
import { bestCpuPerCall } from './lib/best-cpu.js'
import { HotCounter, HotHistogram } from '../src/metrics/hot-series.js'
import { tracingOn } from '../src/telemetry/tracing.js'

const ROUNDS = 15
const CALLS = 200_000
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const registry = new Registry()
const promCounter = new Counter({ name: 'a_total', help: 'a', labelNames: ['route', 'method', 'status'], registers: [registry] })
const promHistogram = new Histogram({ name: 'b_seconds', help: 'b', labelNames: ['kind', 'status_class'], buckets: BUCKETS, registers: [registry] })
const promInc = promCounter.labels({ route: 'iceberg:passthrough', method: 'GET', status: '200' })
const promObserve = promHistogram.labels({ kind: 'load', status_class: '2xx' })
const hotInc = new HotCounter('c_total', 'c').labels({ route: 'iceberg:passthrough', method: 'GET', status: '200' })
const hotObserve = new HotHistogram('d_seconds', 'd', BUCKETS).labels({ kind: 'load', status_class: '2xx' })
let sink = 0

const parts: Array<[string, () => unknown]> = [
  ['prom-client counter labels().inc()', () => promInc.inc()],
  ['bound counter inc()', () => hotInc.inc()],
  ['prom-client histogram labels().observe()', () => promObserve.observe(0.0031)],
  ['bound histogram observe()', () => hotObserve.observe(0.0031)],
  ['tracingOn() with no SDK', () => { if (tracingOn()) sink++ }]
]

const best = bestCpuPerCall(parts, ROUNDS, CALLS)
process.stdout.write(`counting a request, CPU ns per call (best of ${ROUNDS} rounds of ${CALLS}):\n`)
parts.forEach(([name], k) => process.stdout.write(`  ${((best[k] as number) * 1000).toFixed(1).padStart(8)}  ${name}\n`))
const ratio = (a: number, b: number): string => ((best[a] as number) / Math.max(best[b] as number, 1e-6)).toFixed(0)
process.stdout.write(`prom-client / bound: counter ${ratio(0, 1)}×, histogram ${ratio(2, 3)}×${sink > 0 ? ' (tracing was on)' : ''}\n`)
