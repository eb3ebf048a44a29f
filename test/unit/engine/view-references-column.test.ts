/**
 * VIEW_REFERENCES_COLUMN through the engine: which changes touch which views (renames, drops of a
 * struct a view reads inside, moves, stars, unparsed views, columns known only by name), one
 * finding per view, the table drop and rename findings, and the views a change breaks.
 */
import t from 'tap'
import { evaluateCommit } from '../../../src/engine/evaluate-commit.js'
import { tableRemovalViolations, viewsBrokenBy } from '../../../src/engine/rules/platform/view-references-column.js'
import { parseTableMetadata } from '../../../src/iceberg/parse.js'
import type { TableMetadata } from '../../../src/iceberg/types.js'
import type { DependentView } from '../../../src/iceberg/view-reads.js'
import { loadPolicy } from '../../../src/policy/load-policy.js'
import { resolvePolicy } from '../../../src/policy/resolve-policy.js'

const FIELDS = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'amount', required: false, type: 'double' },
  { id: 3, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'city', required: false, type: 'string' }, { id: 5, name: 'zip', required: false, type: 'string' }] } },
  { id: 6, name: 'note', required: false, type: 'string' }
]

const base = parseTableMetadata({
  'format-version': 2,
  'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
  location: 's3://w/sales/orders',
  'last-sequence-number': 0,
  'last-updated-ms': 1,
  'last-column-id': 6,
  'current-schema-id': 0,
  schemas: [{ type: 'struct', 'schema-id': 0, fields: FIELDS }],
  'default-spec-id': 0,
  'partition-specs': [{ 'spec-id': 0, fields: [] }],
  'last-partition-id': 999,
  'default-sort-order-id': 0,
  'sort-orders': [{ 'order-id': 0, fields: [] }],
  properties: {},
  snapshots: []
}).metadata as TableMetadata

const settings = resolvePolicy(loadPolicy('builtin:recommended'), { namespace: ['sales'], name: 'orders' })

function view (name: string, extra: Partial<DependentView>): DependentView {
  return { namespace: ['sales'], name, dialects: ['spark'], columns: [], star: false, parsed: true, ...extra }
}

const VIEWS: DependentView[] = [
  view('reads_amount', { columns: [{ name: 'amount', fieldId: 2, pathIds: [2] }] }),
  view('reads_city', { columns: [{ name: 'address.city', fieldId: 4, pathIds: [3, 4] }] }),
  view('star', { star: true }),
  view('unparsed', { parsed: false, star: true, dialects: ['trino'] }),
  view('by_name', { columns: [{ name: 'note' }] })
]

function commit (fields: unknown[]): { requirements: unknown[], updates: unknown[] } {
  return {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
    updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields } }, { action: 'set-current-schema', 'schema-id': -1 }]
  }
}

function viewsFound (fields: unknown[]): string[] {
  const e = evaluateCommit({ base, request: commit(fields), settings, target: 'table', dependents: VIEWS })
  return e.findings.filter(f => f.rule === 'VIEW_REFERENCES_COLUMN').map(f => /view sales\.(\w+)/.exec(f.message)?.[1] ?? '?')
}

t.test('which changes touch which views', async t => {
  t.same(viewsFound(FIELDS.map(f => f.id === 2 ? { ...f, name: 'total' } : f)), ['reads_amount', 'star', 'unparsed'], 'a rename: the reader, stars and unparsed views')
  t.same(viewsFound(FIELDS.filter(f => f.id !== 3)), ['reads_city', 'star', 'unparsed'], 'dropping a struct breaks a view reading a field inside it')
  t.same(viewsFound(FIELDS.map(f => f.id === 3 ? { ...f, type: { type: 'struct', fields: [{ id: 4, name: 'town', required: false, type: 'string' }, { id: 5, name: 'zip', required: false, type: 'string' }] } } : f)),
    ['reads_city', 'star', 'unparsed'], 'renaming a nested field on the path')
  t.same(viewsFound(FIELDS.map(f => f.id === 6 ? { ...f, name: 'comment' } : f)), ['star', 'unparsed', 'by_name'], 'a column known only by name is matched by its old name')
  t.same(viewsFound([...FIELDS, { id: 7, name: 'extra', required: false, type: 'string' }]), [], 'an added column breaks nobody')
  t.same(viewsFound(FIELDS.map(f => f.id === 6 ? { ...f, doc: 'a note' } : f)), [], 'a doc change breaks nobody')
})

t.test('the finding names the view, its dialect, the column and the name it would need', async t => {
  const e = evaluateCommit({ base, request: commit(FIELDS.map(f => f.id === 2 ? { ...f, name: 'total' } : f)), settings, target: 'table', dependents: [VIEWS[0] as DependentView] })
  const f = e.findings.find(x => x.rule === 'VIEW_REFERENCES_COLUMN')
  t.equal(f?.message, 'Cannot rename column amount (id 2) to total: view sales.reads_amount (spark) reads it; the view would need to read total instead')
  t.equal(f?.severity, 'warn', 'warn under builtin:recommended')
  t.equal(f?.fieldId, 2)
  const off = resolvePolicy(loadPolicy('builtin:spec'), { namespace: ['sales'], name: 'orders' })
  const spec = evaluateCommit({ base, request: commit(FIELDS.map(x => x.id === 2 ? { ...x, name: 'total' } : x)), settings: off, target: 'table', dependents: VIEWS })
  t.notOk(spec.findings.some(x => x.rule === 'VIEW_REFERENCES_COLUMN'), 'off under builtin:spec')
})

t.test('the views a change breaks, for the dry run and check', async t => {
  const e = evaluateCommit({ base, request: commit(FIELDS.filter(f => f.id !== 3)), settings, target: 'table' })
  t.same(viewsBrokenBy(VIEWS, e.changes, e.baseSchema).map(v => v.name), ['reads_city', 'star', 'unparsed'])
})

t.test('a table dropped or renamed: one violation per view', async t => {
  const dropped = tableRemovalViolations(VIEWS.slice(0, 2), 'drop', 'sales.orders')
  t.same(dropped.map(v => v.message), [
    'Cannot drop table sales.orders: view sales.reads_amount (spark) reads it (columns amount (field 2))',
    'Cannot drop table sales.orders: view sales.reads_city (spark) reads it (columns address.city (field 4))'
  ])
  t.match(tableRemovalViolations([VIEWS[2] as DependentView], 'rename', 'sales.orders', 'sales.orders_v2')[0]?.message,
    'Cannot rename table sales.orders to sales.orders_v2: view sales.star (spark) reads it (every column); the view would need to read sales.orders_v2 instead')
})

t.test('a view version reading a column its table lacks', async t => {
  const e = evaluateCommit({ request: { updates: [] }, settings, target: 'view', viewReads: [{ table: 'sales.orders', columns: ['amount'] }] })
  t.same(e.findings.map(f => [f.rule, f.severity, f.message]), [['VIEW_REFERENCES_COLUMN', 'warn', 'Cannot write a view that reads column amount of table sales.orders: the table\'s current schema has no such column']])
})
