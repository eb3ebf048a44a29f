/**
 * `npm run soak -- --minutes 2`: a mixed workload through iceguard to the embedded catalog, for
 * minutes on end, then an audit of the catalog: it must hold exactly the commits iceguard
 * answered 200 — nothing lost, nothing doubled — and none of the ones it refused.
 *
 * Each worker owns one table (so no commit can fail for a reason the soak did not cause) and
 * loops: loadTable of any table, data commits (add-snapshot + set-snapshot-ref, asserting the
 * current main), schema commits (one new optional column, asserting the current schema) and
 * refused ones (a long column narrowed to int, which the Iceberg spec forbids). It reports
 * unexpected answers, p50/p99 per operation, and iceguard's RSS over time.
 *
 * With `--faults on` (the default) the decisions go to a PostgreSQL started for the run (when
 * PostgreSQL is installed), the upstream catalog is restarted a third of the way in and
 * PostgreSQL (`pg_ctl restart -m fast`) two thirds of the way in. A commit cut by the catalog
 * restart may answer 502/503/504 (state unknown, or nothing forwarded): the worker reads its table
 * again and counts what landed. The report adds commits acknowledged, decisions stored, and
 * whether iceguard lived through both restarts.
 *
 *   --minutes 2   --workers 8   --max-ops 2000000   --seed 1   --faults on|off
 * Bounded by both time and operation count; only 127.0.0.1 is contacted.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { isLosslessNumber, parse, stringify } from 'lossless-json'
import pg from 'pg'
import { Pool } from 'undici'
import { startEmbeddedCatalog, type EmbeddedCatalog } from '../src/dev-catalog/index.js'
import { buildForBench } from './lib/build.js'
import { BENCH_DIR, freePort, killAll, nodeServer, start, stop, waitForPort } from './lib/processes.js'
import { startBenchPostgres, type BenchPostgres } from './lib/postgres.js'
import { askUsage } from './lib/usage.js'

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    workers: { type: 'string', default: '8' },
    'max-ops': { type: 'string', default: '2000000' },
    seed: { type: 'string', default: '1' },
    faults: { type: 'string', default: 'on' }
  }
})
const withFaults = args.faults !== 'off'
const minutes = Math.min(Number(args.minutes), 24 * 60)
const workers = Math.max(1, Math.min(Number(args.workers), 64))
const maxOps = Number(args['max-ops'])
if (!(minutes > 0) || !(maxOps > 0)) throw new Error('--minutes and --max-ops must be positive numbers')

type Op = 'load' | 'data-commit' | 'schema-commit' | 'refused-commit'
const EXPECTED: Record<Op, number> = { load: 200, 'data-commit': 200, 'schema-commit': 200, 'refused-commit': 400 }

/** Deterministic PRNG (mulberry32): the same seed gives the same sequence of operations. */
function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Field { id: number, name: string, required: boolean, type: string }
interface TableState {
  name: string
  fields: Field[]
  lastColumnId: number
  schemaId: number
  sequence: number
  main: bigint | null
  /** snapshot ids of every data commit answered 200 */
  committed: bigint[]
  schemaCommits: number
  /** Data commits answered 5xx during a fault: whether they landed is read from the catalog. */
  unknown: bigint[]
  /** A commit's outcome is unknown: read the table again before the next one. */
  resync: boolean
}

/** While a fault runs (and for a moment after), 5xx answers to commits are expected. */
const faultWindow = { open: false, closedAt: 0 }
const inFault = (): boolean => faultWindow.open || Date.now() - faultWindow.closedAt < 3000

const stats = {
  ops: new Map<Op, number[]>(),
  answers: new Map<string, number>(),
  unexpected: [] as string[]
}

function record (op: Op, status: number, ms: number, body: string): void {
  const list = stats.ops.get(op) ?? []
  list.push(ms)
  stats.ops.set(op, list)
  const key = `${op} ${status}`
  stats.answers.set(key, (stats.answers.get(key) ?? 0) + 1)
  if (status >= 502 && status <= 504 && inFault()) return
  if (status !== EXPECTED[op] && stats.unexpected.length < 50) stats.unexpected.push(`${op}: ${status} ${body.slice(0, 300)}`)
}

async function send (pool: Pool, method: 'GET' | 'POST', p: string, body?: unknown): Promise<{ status: number, text: string, ms: number }> {
  const t0 = performance.now()
  const res = await pool.request({
    method,
    path: p,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : stringify(body) ?? ''
  })
  const text = await res.body.text()
  return { status: res.statusCode, text, ms: performance.now() - t0 }
}

const TABLES = '/v1/namespaces/soak/tables'

async function createTable (pool: Pool, name: string): Promise<TableState> {
  const fields: Field[] = [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: false, type: 'long' },
    { id: 3, name: 'label', required: false, type: 'string' }
  ]
  // Every data commit adds a snapshot, and every commit writes the whole metadata again: a short
  // metadata-log keeps the in-memory catalog's own footprint small while the tables grow.
  const properties = { 'write.metadata.previous-versions-max': '10' }
  const r = await send(pool, 'POST', TABLES, { name, schema: { type: 'struct', 'schema-id': 0, 'identifier-field-ids': [1], fields }, properties })
  if (r.status !== 200) throw new Error(`creating ${name} failed: ${r.status} ${r.text}`)
  const md = (parse(r.text) as { metadata: { 'current-schema-id': unknown, 'last-column-id': unknown } }).metadata
  return { name, fields, lastColumnId: Number(md['last-column-id']), schemaId: Number(md['current-schema-id']), sequence: 0, main: null, committed: [], schemaCommits: 0, unknown: [], resync: false }
}

function dataCommit (t: TableState, snapshotId: bigint): unknown {
  const requirements = [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': t.main }]
  const snapshot: Record<string, unknown> = {
    'snapshot-id': snapshotId,
    'sequence-number': t.sequence + 1,
    'timestamp-ms': Date.now(),
    'manifest-list': `file:///soak/${t.name}/metadata/snap-${snapshotId}.avro`,
    summary: { operation: 'append', 'added-records': '100' },
    'schema-id': t.schemaId
  }
  if (t.main !== null) snapshot['parent-snapshot-id'] = t.main
  return {
    requirements,
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId }
    ]
  }
}

function schemaCommit (t: TableState, fields: Field[], lastColumnId: number): unknown {
  return {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': t.schemaId }],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': t.schemaId + 1, 'identifier-field-ids': [1], fields }, 'last-column-id': lastColumnId },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }
}

async function worker (pool: Pool, w: number, own: TableState, all: TableState[], deadline: number, budget: { left: number }): Promise<void> {
  const rand = prng(Number(args.seed) * 1000 + w)
  let k = 0
  while (Date.now() < deadline && budget.left-- > 0) {
    if (own.resync && !(await resync(pool, own))) continue
    const x = rand()
    if (x < 0.5) {
      const t = all[Math.floor(rand() * all.length)] ?? own
      const r = await send(pool, 'GET', `${TABLES}/${t.name}`)
      record('load', r.status, r.ms, r.text)
    } else if (x < 0.8) {
      // Above 2^53 on purpose: a proxy that re-encoded through JSON.parse would corrupt it.
      const id = 3055729675574597004n + BigInt(w) * 1_000_000_000n + BigInt(++k)
      const r = await send(pool, 'POST', `${TABLES}/${own.name}`, dataCommit(own, id))
      record('data-commit', r.status, r.ms, r.text)
      if (r.status === 200) {
        own.committed.push(id)
        own.main = id
        own.sequence++
      } else if (r.status >= 502) {
        own.unknown.push(id)
        own.resync = true
      }
    } else if (x < 0.92) {
      const field = { id: own.lastColumnId + 1, name: `added_${own.lastColumnId + 1}`, required: false, type: 'string' }
      const fields = [...own.fields, field]
      const r = await send(pool, 'POST', `${TABLES}/${own.name}`, schemaCommit(own, fields, field.id))
      record('schema-commit', r.status, r.ms, r.text)
      if (r.status === 200) {
        const md = (parse(r.text) as { metadata: { 'current-schema-id': unknown } }).metadata
        own.fields = fields
        own.lastColumnId = field.id
        own.schemaId = Number(md['current-schema-id'])
        own.schemaCommits++
      } else if (r.status >= 502) own.resync = true
    } else {
      // Spec "Schema Evolution": long → int is a narrowing, never allowed.
      const fields = own.fields.map(f => (f.name === 'amount' ? { ...f, type: 'int' } : f))
      const r = await send(pool, 'POST', `${TABLES}/${own.name}`, schemaCommit(own, fields, own.lastColumnId))
      record('refused-commit', r.status, r.ms, r.text)
    }
  }
}

/**
 * After a commit answered 5xx: the table as the catalog has it now. Data commits whose answer was
 * lost count as committed when their snapshot is there; the schema state is the catalog's.
 */
async function resync (pool: Pool, own: TableState): Promise<boolean> {
  const r = await send(pool, 'GET', `${TABLES}/${own.name}`)
  if (r.status !== 200) {
    await new Promise(resolve => setTimeout(resolve, 200))
    return false
  }
  const md = (parse(r.text) as { metadata: Record<string, unknown> }).metadata
  const have = new Set(((md.snapshots ?? []) as Array<Record<string, unknown>>).map(x => String(x['snapshot-id'])))
  own.committed.push(...own.unknown.filter(id => have.has(String(id))))
  own.unknown = []
  const main = (md.refs as Record<string, { 'snapshot-id': unknown }> | undefined)?.main?.['snapshot-id']
  own.main = main === undefined ? null : BigInt(String(main))
  own.sequence = Number(md['last-sequence-number'])
  const schemas = (md.schemas ?? []) as Array<{ 'schema-id': unknown, fields: Field[] }>
  own.schemaId = Number(md['current-schema-id'])
  own.fields = schemas.find(x => Number(x['schema-id']) === own.schemaId)?.fields.map(f => ({ ...f, id: Number(f.id) })) ?? own.fields
  own.lastColumnId = Number(md['last-column-id'])
  own.schemaCommits = schemas.length - 1
  own.resync = false
  return true
}

interface Audit { table: string, problems: string[] }

/** Reads each table straight from the catalog and compares it with what was answered 200. */
async function audit (catalogUrl: string, tables: TableState[]): Promise<Audit[]> {
  const pool = new Pool(new URL(catalogUrl).origin, { connections: 1 })
  const out: Audit[] = []
  try {
    for (const t of tables) {
      const problems: string[] = []
      const res = await pool.request({ method: 'GET', path: `${new URL(catalogUrl).pathname.replace(/\/$/, '')}${TABLES}/${t.name}` })
      const md = (parse(await res.body.text()) as { metadata: Record<string, unknown> }).metadata
      const ids = ((md.snapshots ?? []) as Array<Record<string, unknown>>).map(s => BigInt(String(s['snapshot-id'])))
      const have = new Set(ids.map(String))
      if (have.size !== ids.length) problems.push(`${ids.length - have.size} snapshot(s) stored twice`)
      const lost = t.committed.filter(id => !have.has(String(id)))
      if (lost.length > 0) problems.push(`${lost.length} commit(s) answered 200 are missing, e.g. ${String(lost[0])}`)
      const extra = ids.length - t.committed.length
      if (extra > 0) problems.push(`${extra} snapshot(s) in the catalog that no 200 answered`)
      const schemas = (md.schemas ?? []) as Array<{ fields: Array<{ name: string, type: unknown }> }>
      if (schemas.length !== 1 + t.schemaCommits) problems.push(`${schemas.length} schemas, expected ${1 + t.schemaCommits}`)
      const amount = schemas.flatMap(s => s.fields).filter(f => f.name === 'amount' && f.type !== 'long')
      if (amount.length > 0) problems.push('a refused long → int change reached the catalog')
      const main = (md.refs as Record<string, { 'snapshot-id': unknown }> | undefined)?.main?.['snapshot-id']
      const mainId = main === undefined ? null : isLosslessNumber(main) ? BigInt(main.toString()) : BigInt(String(main))
      if (mainId !== t.main) problems.push(`main is ${String(mainId)}, the last commit answered 200 set ${String(t.main)}`)
      out.push({ table: t.name, problems })
    }
  } finally {
    await pool.close()
  }
  return out
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0
}

/** Figures of the fault run, for the report. */
interface FaultReport {
  readonly faults: string[]
  readonly aliveAfter: boolean
  /** Gated writes (schema and refused commits) iceguard answered. */
  readonly gatedAnswered: number
  /** Commits answered 200 (data and schema). */
  readonly acknowledged: number
  readonly decisionsStored: number
  readonly decisionsTwice: number
  readonly decisionNotStored: number
}

async function restartCatalog (catalog: EmbeddedCatalog, port: number, warehouse: string): Promise<EmbeddedCatalog> {
  await catalog.close()
  await new Promise(resolve => setTimeout(resolve, 1000))
  return await startEmbeddedCatalog({ warehouse, port })
}

async function main (): Promise<void> {
  const t0 = Date.now()
  buildForBench()
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'iceguard-soak-'))
  // The catalog keeps its tables on disk, so a restart finds them again.
  const warehouse = path.join(logDir, 'warehouse')
  const catalogPort = await freePort()
  let catalog = await startEmbeddedCatalog({ warehouse, port: catalogPort })
  const pgServer: BenchPostgres | undefined = withFaults ? await startBenchPostgres() : undefined
  if (withFaults && pgServer === undefined) process.stderr.write('soak: PostgreSQL is not installed (apt-get install postgresql): decisions go to SQLite, and only the catalog is restarted\n')
  const resultsDir = path.join(BENCH_DIR, 'results')
  mkdirSync(resultsDir, { recursive: true })
  const port = await freePort()
  const store = pgServer !== undefined ? ['--database-url', pgServer.url] : ['--state-dir', path.join(logDir, 'state')]
  const ig = start('soak-iceguard', nodeServer('src/main/server.ts', ['--upstream', catalog.url, '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn', ...store]),
    { probe: true, logDir, env: { NODE_ENV: 'production' } })
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: workers, pipelining: 1 })
  const memory: Array<{ s: number, rssMb: number }> = []
  let sampler: NodeJS.Timeout | undefined
  const faultTimers: NodeJS.Timeout[] = []
  try {
    await waitForPort(ig, port, 60_000)
    const ns = await send(pool, 'POST', '/v1/namespaces', { namespace: ['soak'], properties: {} })
    if (ns.status !== 200) throw new Error(`creating the namespace failed: ${ns.status} ${ns.text}`)
    const tables: TableState[] = []
    for (let i = 0; i < workers; i++) tables.push(await createTable(pool, `t${i}`))
    const sample = async (): Promise<void> => {
      const u = await askUsage(ig.child)
      memory.push({ s: Math.round((Date.now() - t0) / 1000), rssMb: Math.round(u.rss / 1048576) })
    }
    await sample()
    const every = Math.max(5_000, minutes * 60_000 / 12)
    sampler = setInterval(() => { sample().catch(() => {}) }, every)
    const deadline = Date.now() + minutes * 60_000
    const budget = { left: maxOps }
    const faults: string[] = []
    const faultRuns: Array<Promise<void>> = []
    const fault = (at: number, name: string, run: () => Promise<void>): void => {
      faultTimers.push(setTimeout(() => {
        faultWindow.open = true
        const began = Date.now()
        faultRuns.push(run().then(() => { faults.push(`${name} at ${Math.round((began - t0) / 1000)} s (${Date.now() - began} ms)`) },
          (err: unknown) => { faults.push(`${name} FAILED: ${String(err)}`) }).finally(() => { faultWindow.open = false; faultWindow.closedAt = Date.now() }))
      }, at))
    }
    if (withFaults) {
      fault(minutes * 60_000 / 3, 'upstream catalog restarted', async () => { catalog = await restartCatalog(catalog, catalogPort, warehouse) })
      if (pgServer !== undefined) fault(minutes * 60_000 * 2 / 3, 'PostgreSQL restarted (pg_ctl restart -m fast)', async () => { await pgServer.restart('fast') })
    }
    process.stderr.write(`soak: ${workers} workers for ${minutes} min through iceguard to the embedded catalog${withFaults ? ', with faults' : ''}\n`)
    await Promise.all(tables.map((t, w) => worker(pool, w, t, tables, deadline, budget)))
    await Promise.all(faultRuns)
    clearInterval(sampler)
    await sample()
    for (const t of tables) if (t.resync) await resync(pool, t)
    const audits = await audit(catalog.url, tables)
    const faultReport = withFaults ? await faultFigures(ig, pgServer, faults) : undefined
    const report = render(audits, memory, (Date.now() - t0) / 1000, faultReport)
    process.stdout.write(report)
    writeFileSync(path.join(resultsDir, 'soak-latest.md'), report)
    const failed = stats.unexpected.length > 0 || audits.some(a => a.problems.length > 0) ||
      (faultReport !== undefined && (!faultReport.aliveAfter || faultReport.decisionsTwice > 0 || faultReport.decisionNotStored > 0 ||
        (pgServer !== undefined && faultReport.decisionsStored < faultReport.gatedAnswered)))
    process.exitCode = failed ? 1 : 0
  } finally {
    for (const timer of faultTimers) clearTimeout(timer)
    if (sampler !== undefined) clearInterval(sampler)
    await pool.close()
    await stop(ig)
    await catalog.close()
    await pgServer?.close()
    if (process.exitCode === 0) rmSync(logDir, { recursive: true, force: true })
    else process.stderr.write(`soak: iceguard's log is in ${logDir}\n`)
  }
}

/** Waits for iceguard's buffer to reach the store, then counts what it holds. */
async function faultFigures (ig: ReturnType<typeof start>, pgServer: BenchPostgres | undefined, faults: string[]): Promise<FaultReport> {
  const gatedAnswered = [...stats.answers].filter(([k]) => /^(schema-commit|refused-commit) (200|400)$/.test(k)).reduce((n, [, v]) => n + v, 0)
  const acknowledged = [...stats.answers].filter(([k]) => /commit 200$/.test(k)).reduce((n, [, v]) => n + v, 0)
  let decisionsStored = -1
  let decisionsTwice = 0
  if (pgServer !== undefined) {
    const db = new pg.Client({ connectionString: pgServer.url })
    await db.connect()
    try {
      for (let i = 0; i < 100; i++) {
        decisionsStored = Number((await db.query("SELECT COUNT(*) AS n FROM decisions WHERE kind = 'update-table'")).rows[0].n)
        if (decisionsStored >= gatedAnswered) break
        await new Promise(resolve => setTimeout(resolve, 200))
      }
      // One decision per write: two with one request id would be a decision stored twice.
      decisionsTwice = Number((await db.query('SELECT COUNT(*) AS n FROM (SELECT request_id FROM decisions GROUP BY request_id, table_name HAVING COUNT(*) > 1) x')).rows[0].n)
    } finally {
      await db.end()
    }
  }
  const log = ig.output()
  return {
    faults,
    aliveAfter: ig.child.exitCode === null && ig.child.signalCode === null,
    gatedAnswered,
    acknowledged,
    decisionsStored,
    decisionsTwice,
    decisionNotStored: (log.match(/decision not stored/g) ?? []).length
  }
}

function render (audits: Audit[], memory: Array<{ s: number, rssMb: number }>, seconds: number, faults?: FaultReport): string {
  const L = [`## iceguard soak: ${workers} workers, ${minutes} min (${Math.round(seconds)} s in all)`, '']
  L.push('| operation | count | expected status | p50 ms | p99 ms |', '|---|--:|--:|--:|--:|')
  for (const [op, list] of stats.ops) {
    const s = [...list].sort((a, b) => a - b)
    L.push(`| ${op} | ${s.length} | ${EXPECTED[op]} | ${percentile(s, 0.5).toFixed(2)} | ${percentile(s, 0.99).toFixed(2)} |`)
  }
  L.push('', `Answers: ${[...stats.answers].map(([k, v]) => `${k}: ${v}`).join(', ')}`)
  L.push('', stats.unexpected.length === 0 ? 'Unexpected answers: none.' : `Unexpected answers (${stats.unexpected.length}, first ones):\n\n${stats.unexpected.map(u => `- ${u}`).join('\n')}`)
  L.push('', `iceguard RSS over time (s → MB): ${memory.map(m => `${m.s}→${m.rssMb}`).join(', ')}`)
  const bad = audits.filter(a => a.problems.length > 0)
  const commits = [...stats.answers].filter(([k]) => k.endsWith(' 200') && !k.startsWith('load')).reduce((n, [, v]) => n + v, 0)
  L.push('', bad.length === 0
    ? `Catalog audit: all ${audits.length} tables hold exactly the ${commits} commits answered 200 and none of the refused ones.`
    : `Catalog audit FAILED:\n\n${bad.map(a => `- ${a.table}: ${a.problems.join('; ')}`).join('\n')}`)
  if (faults !== undefined) {
    L.push('', `Faults: ${faults.faults.length > 0 ? faults.faults.join('; ') : 'none ran'}.`)
    L.push(`iceguard ${faults.aliveAfter ? 'lived through them' : 'DID NOT live through them'}; commits acknowledged (200): ${faults.acknowledged}; ` +
      `gated writes answered (schema 200 + refused 400): ${faults.gatedAnswered}; decisions stored: ${faults.decisionsStored < 0 ? 'n/a (SQLite)' : faults.decisionsStored}; ` +
      `stored twice: ${faults.decisionsTwice}; "decision not stored" lines: ${faults.decisionNotStored}; ` +
      `RSS before → after: ${memory[0]?.rssMb ?? '?'} → ${memory[memory.length - 1]?.rssMb ?? '?'} MB.`)
  }
  return L.join('\n') + '\n'
}

main().catch(err => {
  process.stderr.write(`soak: ${(err as Error).stack ?? String(err)}\n`)
  killAll()
  process.exitCode = 1
})
