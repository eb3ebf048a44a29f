/**
 * The schema-history summary read incrementally (a commit reads only the schemas new since the
 * last) answers exactly what reading the whole list from scratch answers, for every prefix a
 * caller's base may hold; and the store keeps memory to its budget, whole tables out.
 */
import fc from 'fast-check'
import t from 'tap'
import { createHistoryStore, markServed, type HistoryOutcome } from '../../../src/iceberg/history-store.js'
import { summarize, type HistoryView } from '../../../src/iceberg/history-summary.js'
import type { NestedField, Schema, TableMetadata } from '../../../src/iceberg/types.js'

const NAMES = ['a', 'b', 'B', 'c', 'dd']

/** A column (id, name), optionally a struct of one child (id + 100, name `x`). */
const columnArb = fc.tuple(fc.integer({ min: 1, max: 12 }), fc.constantFrom(...NAMES), fc.boolean())
const schemaArb = fc.uniqueArray(columnArb, { selector: c => c[0], minLength: 0, maxLength: 6 })

function toSchema (columns: ReadonlyArray<[number, string, boolean]>, schemaId: number): Schema {
  const fields: NestedField[] = columns.map(([id, name, nested]) => nested
    ? { id, name, required: false, type: { kind: 'struct', fields: [{ id: id + 100, name: 'x', required: false, type: { kind: 'long' } }] } }
    : { id, name, required: false, type: { kind: 'long' } })
  return { schemaId, identifierFieldIds: [], struct: { kind: 'struct', fields } }
}

/** Metadata as an upstream would serve it (marked so: its history may be kept). */
function table (uuid: string, schemas: readonly Schema[]): TableMetadata {
  const m = unserved(uuid, schemas)
  markServed(m)
  return m
}

/** Metadata a caller wrote itself (a dry run's `metadata`). */
function unserved (uuid: string, schemas: readonly Schema[]): TableMetadata {
  return {
    formatVersion: 2,
    tableUuid: uuid,
    location: 's3://b/t',
    lastColumnId: 200,
    currentSchemaId: schemas[schemas.length - 1]?.schemaId ?? 0,
    schemas,
    defaultSpecId: 0,
    partitionSpecs: [{ specId: 0, fields: [] }],
    lastPartitionId: 999,
    defaultSortOrderId: 0,
    sortOrders: [{ orderId: 0, fields: [] }],
    properties: {}
  } as unknown as TableMetadata
}

/** Everything a view answers, over every id and name the generator can make. */
function answers (view: HistoryView): unknown {
  const ids: unknown[] = []
  for (let id = 0; id <= 113; id++) ids.push(view.firstSeen(id) ?? null)
  const keys = [...NAMES, ...NAMES.map(n => `${n}.x`)]
  const exact = keys.map(k => view.named(k, true).map(o => [o.id, o.schemaId]))
  const folded = keys.map(k => view.named(k.toLowerCase(), false).map(o => [o.id, o.schemaId]))
  return JSON.parse(JSON.stringify({ covered: view.covered, ids: ids.map(s => s === null ? null : { path: (s as { path: string }).path, schemaId: (s as { schemaId?: number }).schemaId }), exact, folded }))
}

t.test('incremental reads equal a full read, for every prefix a base may hold', async t => {
  fc.assert(fc.property(
    fc.array(schemaArb, { minLength: 1, maxLength: 12 }),
    // Each step: how many schemas the next base holds (a stale base may hold fewer).
    fc.array(fc.nat({ max: 12 }), { minLength: 1, maxLength: 10 }),
    (history, steps) => {
      const schemas = history.map((columns, i) => toSchema(columns, i))
      const store = createHistoryStore()
      for (const step of steps) {
        const n = 1 + (step % schemas.length)
        // A new base object each time, as every commit brings; the Schema objects are new too
        // when `step` is odd (a read that did not reuse parsed schemas).
        const held = step % 2 === 0 ? schemas.slice(0, n) : schemas.slice(0, n).map(s => structuredClone(s))
        const got = answers(store.historyOf(table('u-1', held)))
        const want = answers(summarize(held))
        if (JSON.stringify(got) !== JSON.stringify(want)) return false
      }
      return true
    }
  ), { numRuns: 400 })
  t.pass('400 random histories read in random steps agree with full reads')
})

t.test('the store reads only what is new, and rebuilds when the list is not the one read', async t => {
  const outcomes: HistoryOutcome[] = []
  const store = createHistoryStore({ onOutcome: o => outcomes.push(o) })
  const s = [toSchema([[1, 'a', false]], 0), toSchema([[1, 'a', false], [2, 'b', false]], 1), toSchema([[2, 'b', false], [3, 'a', false]], 2)]
  store.historyOf(table('u', s.slice(0, 2)))
  store.historyOf(table('u', s))
  store.historyOf(table('u', s.slice(0, 1)))
  // Schema 1 replaced by another under its id (a catalog reusing a removed schema's id).
  const other = [s[0] as Schema, toSchema([[7, 'q', false]], 1), s[2] as Schema]
  const view = store.historyOf(table('u', other))
  t.same(outcomes, ['built', 'extended', 'reused', 'built'])
  t.equal(view.firstSeen(2)?.schemaId, 2, 'the replaced schema is not in the history')
  t.equal(view.firstSeen(7)?.schemaId, 1)
  t.same(view.named('a', true).map(o => o.id), [1, 3], 'a name carried by two ids, in history order')
})

t.test('the budget evicts whole tables, least recently used first, and counts it', async t => {
  const outcomes: HistoryOutcome[] = []
  const wide = (from: number): Schema => toSchema(Array.from({ length: 10 }, (_, i) => [from + i, `c${from + i}`, false] as [number, string, boolean]), 0)
  const one = createHistoryStore({ maxBytes: 1e9 })
  one.historyOf(table('probe', [wide(1)]))
  const size = one.bytes
  t.ok(size > 0, 'a summary has a size')
  const store = createHistoryStore({ maxBytes: Math.floor(size * 2.5), onOutcome: o => outcomes.push(o) })
  store.historyOf(table('t1', [wide(1)]))
  store.historyOf(table('t2', [wide(1)]))
  store.historyOf(table('t1', [wide(1)]))
  store.historyOf(table('t3', [wide(1)]))
  t.equal(store.tables, 2, 'two tables fit')
  t.ok(store.bytes <= size * 2.5, 'within the budget')
  t.same(outcomes.filter(o => o === 'evicted'), ['evicted'])
  outcomes.length = 0
  store.historyOf(table('t1', [wide(1)]))
  t.same(outcomes, ['reused'], 't1 was used more recently than t2 and stayed')
  outcomes.length = 0
  store.historyOf(table('t2', [wide(1)]))
  t.same(outcomes, ['built', 'evicted'], 't2 was the one evicted')

  const tiny = createHistoryStore({ maxBytes: 10, onOutcome: o => outcomes.push(o) })
  outcomes.length = 0
  tiny.historyOf(table('big', [wide(1)]))
  tiny.historyOf(table('big', [wide(1), wide(20)]))
  t.same(outcomes, ['built', 'over-budget', 'extended', 'over-budget'], 'a table alone over the budget is kept and counted')
  t.equal(tiny.tables, 1)
})

t.test('metadata no upstream served neither uses nor changes the kept summary', async t => {
  const outcomes: HistoryOutcome[] = []
  const store = createHistoryStore({ onOutcome: o => outcomes.push(o) })
  const real = [toSchema([[1, 'a', false]], 0), toSchema([[2, 'b', false]], 1)]
  store.historyOf(table('u', real))
  // A caller's own metadata under the same uuid: the same schema ids, other contents, one more schema.
  const planted = [toSchema([[1, 'a', true]], 0), toSchema([[2, 'b', true]], 1), toSchema([[9, 'z', false]], 2)]
  const own = store.historyOf(unserved('u', planted))
  t.equal(own.firstSeen(101)?.schemaId, 0, 'it is judged by its own history')
  t.equal(own.firstSeen(9)?.schemaId, 2)
  const after = store.historyOf(table('u', [...real, toSchema([[3, 'c', false]], 2)]))
  t.same(outcomes, ['built', 'built', 'extended'], 'the kept summary was neither used nor replaced')
  t.equal(after.firstSeen(101), undefined, 'nothing of the planted schemas')
  t.equal(after.firstSeen(9), undefined)
  t.equal(after.firstSeen(3)?.schemaId, 2)
})
