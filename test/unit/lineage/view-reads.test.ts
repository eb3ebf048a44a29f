/**
 * The corpus of view texts (test/fixtures/views/corpus.json): for each, the columns read per base
 * table, resolved to field ids through the tables' schemas (tables.json), and whether it reads `*`.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { parseSchema } from '../../../src/iceberg/parse.js'
import type { Schema } from '../../../src/iceberg/types.js'
import { loadSqlParser } from '../../../src/lineage/sql-reads.js'
import { readsTable, resolveTable, viewVersionReads } from '../../../src/lineage/view-reads.js'
import { unparsedTables } from '../../../src/lineage/unparsed-tables.js'

interface Case {
  readonly case: string
  readonly dialect: string
  readonly namespace: string[]
  readonly catalog?: string
  readonly sql: string
  readonly unparsed?: boolean
  readonly expect: Record<string, { columns: string[], star?: boolean }>
}

const fixtures = new URL('../../fixtures/views/', import.meta.url)
const corpus = JSON.parse(readFileSync(new URL('corpus.json', fixtures), 'utf8')) as Case[]
const tableFields = JSON.parse(readFileSync(new URL('tables.json', fixtures), 'utf8')) as Record<string, unknown[]>
const schemas = new Map<string, Schema>()
for (const [name, fields] of Object.entries(tableFields)) {
  const { schema } = parseSchema({ type: 'struct', 'schema-id': 0, fields })
  if (schema === undefined) throw new Error(`fixture schema ${name} does not parse`)
  schemas.set(name, schema)
}
const schemaOf = (table: readonly string[]): Schema | undefined => schemas.get(table.join('.'))

function version (c: Case, dialect = c.dialect): Record<string, unknown> {
  return {
    'version-id': 1,
    'schema-id': 0,
    'timestamp-ms': 1,
    summary: {},
    'default-namespace': c.namespace,
    ...(c.catalog !== undefined && { 'default-catalog': c.catalog }),
    representations: [{ type: 'sql', sql: c.sql, dialect }]
  }
}

t.before(async () => { await loadSqlParser() })

t.test('the corpus: columns per table, by name and field id', async t => {
  t.ok(corpus.filter(c => c.dialect === 'spark').length >= 10, 'Spark texts in the corpus')
  t.ok(corpus.filter(c => c.dialect === 'trino').length >= 10, 'Trino texts in the corpus')
  for (const c of corpus) {
    const reads = viewVersionReads(version(c), schemaOf)
    t.equal(reads.parsed, c.unparsed !== true, `${c.case}: parsed`)
    t.same(reads.dialects, [c.dialect], `${c.case}: dialects`)
    const got: Record<string, { columns: string[], star: boolean }> = {}
    for (const tr of reads.tables) {
      got[tr.table.join('.')] = {
        columns: tr.columns.map(col => col.fieldId === undefined ? col.name : `${col.name}:${col.fieldId}`).sort(),
        star: tr.star
      }
    }
    const want: Record<string, { columns: string[], star: boolean }> = {}
    for (const [table, e] of Object.entries(c.expect)) want[table] = { columns: [...e.columns].sort(), star: e.star === true }
    t.same(got, want, c.case)
  }
})

t.test('a nested column carries the ids of every field on its path', async t => {
  const reads = viewVersionReads(version({ case: '', dialect: 'spark', namespace: ['sales'], sql: 'SELECT address.geo.lat FROM orders', expect: {} }), schemaOf)
  t.same(reads.tables[0]?.columns, [{ name: 'address.geo.lat', fieldId: 12, pathIds: [5, 11, 12] }])
})

t.test('one representation that parses is enough; dialects are all listed', async t => {
  const v = {
    ...version({ case: '', dialect: 'trino', namespace: ['sales'], sql: 'SELECT id FROM orders FOR VERSION AS OF 1', expect: {} }),
    representations: [
      { type: 'sql', sql: 'SELECT id FROM orders FOR VERSION AS OF 1', dialect: 'trino' },
      { type: 'sql', sql: 'SELECT id FROM orders', dialect: 'Spark' }
    ]
  }
  const reads = viewVersionReads(v, schemaOf)
  t.equal(reads.parsed, true)
  t.same(reads.dialects, ['trino', 'spark'])
  t.same(reads.tables.map(tr => ({ table: tr.table, star: tr.star, columns: tr.columns.map(c => c.fieldId) })), [{ table: ['sales', 'orders'], star: false, columns: [1] }])
})

t.test('a statement that is not one query is unparsed', async t => {
  const reads = viewVersionReads(version({ case: '', dialect: 'spark', namespace: ['sales'], sql: 'DROP TABLE orders; SELECT 1 FROM customers', expect: {} }), schemaOf)
  t.equal(reads.parsed, false)
  t.same(reads.tables.map(tr => [tr.table.join('.'), tr.star]), [['sales.customers', true]])
})

t.test('unparsed texts: names after FROM and JOIN, not in strings or comments', async t => {
  t.same(unparsedTables("SELECT 'FROM x' FROM `a b`.c /* JOIN y */ LEFT JOIN \"d\".\"e\" ON 1 = 1, (SELECT 1 FROM f) WHERE EXISTS (SELECT * FROM UNNEST(z))"),
    [['a b', 'c'], ['d', 'e'], ['f']])
})

t.test('table names resolve against the default catalog and namespace', async t => {
  t.same(resolveTable(['orders'], { namespace: ['a', 'b'] }), ['a', 'b', 'orders'])
  t.same(resolveTable(['cat', 'ns', 'orders'], { catalog: 'CAT', namespace: [] }), ['ns', 'orders'])
  t.same(resolveTable(['other', 'ns', 'orders'], { catalog: 'cat', namespace: [] }), ['other', 'ns', 'orders'])
  t.ok(readsTable(['other', 'ns', 'orders'], ['ns', 'orders']), 'an unknown catalog in front still names the table')
  t.ok(readsTable(['NS', 'Orders'], ['ns', 'orders']), 'names compare as the engines compare them')
  t.notOk(readsTable(['ns', 'orders'], ['other', 'ns', 'orders']))
  t.notOk(readsTable(['ns', 'order'], ['ns', 'orders']))
})
