/**
 * What the view index costs, in-process: reading a view's SQL (the parse and the resolution of its
 * columns, done once per view write or crawl), and per schema commit the look-up of the views that
 * read the table plus VIEW_REFERENCES_COLUMN, against an index of 0, 1,000 and 10,000 views (one in
 * a hundred reading the committed table). Each figure is printed beside the commit's evaluation
 * without views, measured in the same run: compare the ratios, not the microseconds.
 *
 *   node --import tsx bench/view-index.ts
 */
import { evaluateCommit } from '../src/engine/evaluate-commit.js'
import { parseSchema, parseTableMetadata } from '../src/iceberg/parse.js'
import type { Schema, TableMetadata } from '../src/iceberg/types.js'
import type { ViewReads } from '../src/iceberg/view-reads.js'
import { DependentsLookup, type IndexedView } from '../src/lineage/dependents.js'
import { loadSqlParser } from '../src/lineage/sql-reads.js'
import { viewVersionReads } from '../src/lineage/view-reads.js'
import { loadPolicy } from '../src/policy/load-policy.js'
import { resolvePolicy } from '../src/policy/resolve-policy.js'

const ROUNDS = 9

function cpuMicros (n: number, f: () => void): number {
  for (let i = 0; i < n; i++) f()
  let best = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.cpuUsage()
    for (let i = 0; i < n; i++) f()
    const used = process.cpuUsage(start)
    best = Math.min(best, (used.user + used.system) / n)
  }
  return best
}

const fields = Array.from({ length: 50 }, (_, i) => ({ id: i + 1, name: `c${i + 1}`, required: false, type: 'long' }))
const schema = parseSchema({ type: 'struct', 'schema-id': 0, fields }).schema as Schema
const base = parseTableMetadata({
  'format-version': 2,
  'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
  location: 's3://warehouse/sales/orders',
  'last-sequence-number': 0,
  'last-updated-ms': 1717171717000,
  'last-column-id': 50,
  'current-schema-id': 0,
  schemas: [{ type: 'struct', 'schema-id': 0, fields }],
  'default-spec-id': 0,
  'partition-specs': [{ 'spec-id': 0, fields: [] }],
  'last-partition-id': 999,
  'default-sort-order-id': 0,
  'sort-orders': [{ 'order-id': 0, fields: [] }],
  properties: {},
  snapshots: []
}).metadata as TableMetadata
const commit = {
  requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
  updates: [
    { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: fields.map(f => f.id === 7 ? { ...f, name: 'renamed' } : f) } },
    { action: 'set-current-schema', 'schema-id': -1 }
  ]
}
const SQL = 'WITH recent AS (SELECT o.c1, o.c7, o.c9 FROM sales.orders o WHERE o.c3 > 10) ' +
  'SELECT r.c1, sum(r.c7) OVER (PARTITION BY r.c9) AS s, c.name FROM recent r JOIN sales.customers c ON r.c1 = c.id WHERE c.active'
const version = { 'version-id': 1, 'default-namespace': ['sales'], representations: [{ type: 'sql', sql: SQL, dialect: 'spark' }] }

await loadSqlParser()
const settings = resolvePolicy(loadPolicy('builtin:recommended'), { namespace: ['sales'], name: 'orders' })
const baseline = cpuMicros(200, () => { evaluateCommit({ base, request: commit, settings, target: 'table' }) })
const read = cpuMicros(200, () => { viewVersionReads(version, t => t.join('.') === 'sales.orders' ? schema : undefined) })

function index (size: number): IndexedView[] {
  const reads: ViewReads = viewVersionReads(version, t => t.join('.') === 'sales.orders' ? schema : undefined)
  const elsewhere: ViewReads = { ...reads, tables: reads.tables.map(tr => ({ ...tr, table: ['other', `t${tr.table.join('_')}`] })) }
  return Array.from({ length: size }, (_, i) => ({ namespace: ['sales'], name: `v${i}`, reads: i % 100 === 0 ? reads : elsewhere }))
}

const rows: Array<[string, number]> = [['commit evaluation, no views (baseline)', baseline], ['reading one view\'s SQL (per view write or crawl)', read]]
for (const size of [0, 1000, 10000]) {
  // As the index answers the gate: views grouped by the tables they read, rebuilt only when the index changes.
  const lookup = new DependentsLookup(index(size))
  rows.push([`commit with an index of ${size} views (look-up + rule)`, cpuMicros(50, () => {
    const dependents = lookup.of(['sales', 'orders'])
    evaluateCommit({ base, request: commit, settings, target: 'table', dependents })
  })])
}
const width = Math.max(...rows.map(r => r[0].length))
for (const [name, us] of rows) process.stdout.write(`${name.padEnd(width)}  ${us.toFixed(1).padStart(9)} µs  ${(us / baseline).toFixed(2).padStart(6)}×\n`)
