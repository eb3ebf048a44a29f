/**
 * The decision log's cost to the thread that serves requests, in process: audit records arrive
 * one per millisecond (a busy gate at one connection), the decision log stores them in the
 * SQLite file through the driver, and the event loop's delay is sampled all the while. A store
 * that runs statements or syncs the file on this thread shows as delay; one that does it
 * elsewhere leaves only the machine's own scheduling. Also the process's CPU per decision
 * (every thread), less that of the same loop with no store.
 *
 *   node --import tsx bench/decision-store.ts [--records 2000] [--rounds 2] [--baseline ../other-checkout]
 *
 * With --baseline the other checkout's decision log, store and SQLite driver are measured too,
 * rounds alternating.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import type { AuditRecord } from '../src/audit/audit-log.js'
import { DecisionLog } from '../src/decisions/decision-log.js'
import { DecisionStore } from '../src/decisions/decision-store.js'
import type { SqlDriver } from '../src/decisions/sql-driver.js'
import { openSqlite } from '../src/decisions/sqlite-driver.js'

const { values } = parseArgs({ options: { records: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '2' }, baseline: { type: 'string' } } })
const records = Number(values.records)
const rounds = Number(values.rounds)

interface Build {
  readonly openSqlite: (file: string) => SqlDriver
  readonly DecisionStore: typeof DecisionStore
  readonly DecisionLog: typeof DecisionLog
}
const builds: Array<[string, Build]> = [['this checkout', { openSqlite, DecisionStore, DecisionLog }]]
if (values.baseline !== undefined) {
  const from = async <T>(file: string): Promise<T> => await import(pathToFileURL(path.resolve(values.baseline as string, 'src/decisions', file)).href) as T
  builds.unshift(['baseline', {
    ...await from<Pick<Build, 'openSqlite'>>('sqlite-driver.ts'),
    ...await from<Pick<Build, 'DecisionStore'>>('decision-store.ts'),
    ...await from<Pick<Build, 'DecisionLog'>>('decision-log.ts')
  }])
}

// What the gate records for an accepted schema commit on one table.
const record = (i: number): AuditRecord => ({
  requestId: `req-${i}`,
  kind: 'update-table',
  tables: ['bench.small'],
  tableRefs: [{ namespace: ['bench'], name: 'small' }],
  flows: ['update'],
  verdict: 'allow',
  rules: [],
  warnings: [],
  summary: '+ added 51 added_column: string (optional)',
  status: 200,
  upstreamStatus: 200,
  forwarded: true,
  durationMs: 1,
  decided: [{ namespace: ['bench'], name: 'small', findings: [], summary: '+ added 51 added_column: string (optional)' }]
})
const quiet = { info () {}, warn () {}, error () {} }

interface Result { p50: number, p99: number, p999: number, max: number, cpuUs: number }

/** One record per millisecond through `accept` (or nothing, for the loop's own cost). */
async function run (build: Build | null): Promise<Result> {
  const dir = mkdtempSync(path.join(tmpdir(), 'iceguard-decisions-'))
  const store = build === null ? null : new build.DecisionStore(build.openSqlite(path.join(dir, 'decisions.sqlite')))
  await store?.migrate()
  const log = build === null || store === null ? null : new build.DecisionLog({ store, log: quiet })
  for (let i = 0; i < 100; i++) log?.accept(record(i))
  await log?.flush()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const c0 = process.cpuUsage()
  for (let i = 0; i < records; i++) {
    log?.accept(record(i))
    await new Promise(resolve => setTimeout(resolve, 1))
  }
  await log?.flush()
  const c = process.cpuUsage(c0)
  delay.disable()
  await log?.close()
  await store?.close()
  rmSync(dir, { recursive: true, force: true })
  const ms = (ns: number): number => ns / 1e6
  return { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), p999: ms(delay.percentile(99.9)), max: ms(delay.max), cpuUs: (c.user + c.system) / records }
}

const rows: string[] = []
for (let r = 0; r < rounds; r++) {
  const idle = await run(null)
  rows.push(`| ${r + 1} | no store | ${idle.p50.toFixed(2)} | ${idle.p99.toFixed(2)} | ${idle.p999.toFixed(2)} | ${idle.max.toFixed(2)} | – |`)
  for (const [name, build] of r % 2 === 0 ? builds : [...builds].reverse()) {
    const x = await run(build)
    rows.push(`| ${r + 1} | ${name} | ${x.p50.toFixed(2)} | ${x.p99.toFixed(2)} | ${x.p999.toFixed(2)} | ${x.max.toFixed(2)} | ${(x.cpuUs - idle.cpuUs).toFixed(0)} |`)
  }
}
process.stdout.write(`Decision log on a SQLite file, ${records} records at one per ms; event-loop delay in ms, CPU µs per decision (all threads, less the loop with no store):\n\n` +
  '| round | build | delay p50 | p99 | p99.9 | max | CPU µs/decision |\n|--:|---|--:|--:|--:|--:|--:|\n' + rows.join('\n') + '\n')
