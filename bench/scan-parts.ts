/**
 * The fast lane's commit scan, in-process (no HTTP): what deciding "data-only commit, no gate"
 * costs on the `data-commit` workload's body (add-snapshot + set-snapshot-ref, ~5 KB), with the
 * scanner before the one-pass validator (a forgiving action scan, then `buffer.isUtf8` and
 * `JSON.parse` to prove the body strict JSON) and the current one measured alternately, round
 * by round, so that other load on a shared machine hits both alike.
 *
 *   node --import tsx bench/scan-parts.ts
 *
 * Figures are CPU µs per call (process.cpuUsage), the best of several rounds; compare rows of one
 * run with each other. `isUtf8` and `JSON.parse` are references: parts of the old scan; `valueEnd`
 * is the shared walk of src/json/scan.ts, which the triage's own walk repeats with its key checks.
 */
import { bestCpuPerCall } from './lib/best-cpu.js'
import { isUtf8 } from 'node:buffer'
import { needsGate } from '../src/json/commit-scan.js'
import { valueEnd } from '../src/json/scan.js'
import { needsGateByParse } from '../test/helpers/commit-scan-reference.js'
import { dataCommit, type TableOptions } from './lib/fixtures.js'

const SMALL: TableOptions = { table: 'small', columns: 50, snapshots: 3 }
const ROUNDS = 15
const CALLS = 4000

const body = Buffer.from(dataCommit(SMALL, 5 * 1024))
if (needsGate(body) || needsGateByParse(body)) throw new Error('the benchmark body should skip the gate')

const parts: Array<[string, () => unknown]> = [
  ['needsGate, before (action scan + isUtf8 + JSON.parse)', () => needsGateByParse(body)],
  ['needsGate, now (one-pass validator)', () => needsGate(body)],
  ['  reference: valueEnd alone (the shared grammar walk, no action checks)', () => valueEnd(body, 0)],
  ['  reference: isUtf8 alone', () => isUtf8(body)],
  ['  reference: toString + JSON.parse alone', () => JSON.parse(body.toString('utf8'))]
]

const best = bestCpuPerCall(parts, ROUNDS, CALLS)
process.stdout.write(`commit scan on a ${body.length}-byte data commit, CPU µs per call (best of ${ROUNDS} rounds of ${CALLS}):\n`)
parts.forEach(([name], k) => process.stdout.write(`  ${(best[k] as number).toFixed(2).padStart(7)}  ${name}\n`))
