/**
 * The history rules read a table's schema history through a summary kept per table uuid and the
 * schemas it covers (`src/iceberg/history-store.ts`), because a new base (a new ETag) holds nearly
 * the same schemas. These tests judge several different commits against one
 * base, and against new bases over the same or other schema objects, in turn, and check each answer
 * is the one a freshly read base gives: no commit may see another's answer.
 */
import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import t from 'tap'
import { evaluateCommit } from '../../../src/engine/evaluate-commit.js'
import { parseTableMetadata } from '../../../src/iceberg/parse.js'
import type { Schema, TableMetadata } from '../../../src/iceberg/types.js'
import { configureTableHistory, markServed } from '../../../src/iceberg/history-store.js'
import { droppedNamed } from '../../../src/engine/rules/platform/dropped-name-reused.js'
import { historyOf } from '../../../src/engine/rules/spec/field-id-not-reused.js'
import type { RuleSettings } from '../../../src/engine/rules/rule.js'

const fixtureRoot = new URL('../../fixtures/rules/', import.meta.url)

function read (rule: string, file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`${rule}/${file}`, fixtureRoot), 'utf8')) as Record<string, unknown>
}

function base (rule: string): TableMetadata {
  const { metadata } = parseTableMetadata(read(rule, 'base.json'))
  if (metadata === undefined) throw new Error('the fixture base does not parse')
  return metadata
}

function only (ruleId: string, options: Record<string, unknown> = {}): RuleSettings {
  return { mode: 'enforce', severity: id => id === ruleId ? 'error' : 'off', options: () => options, isExcepted: () => false }
}

/** The commit with the added schema's field named `from` renamed `to`. */
function renamed (commit: Record<string, unknown>, from: string, to: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(commit).replace(`"name":"${from}"`, `"name":"${to}"`)) as Record<string, unknown>
}

/** The commit with the added schema's field of id `from` given id `to`. */
function renumbered (commit: Record<string, unknown>, from: number, to: number): Record<string, unknown> {
  return JSON.parse(JSON.stringify(commit).replace(`"id":${from},`, `"id":${to},`)) as Record<string, unknown>
}

const messages = (b: TableMetadata, request: Record<string, unknown>, settings: RuleSettings): string[] =>
  evaluateCommit({ base: b, request, settings }).findings.map(f => f.message)

t.test('FIELD_ID_NOT_REUSED: one base object, commits that do and do not reuse an id, in turn', async t => {
  const shared = served(base('FIELD_ID_NOT_REUSED'))
  const reuse = read('FIELD_ID_NOT_REUSED', 'commit.json')
  const fresh = renumbered(reuse, 13, 14)
  const settings = only('FIELD_ID_NOT_REUSED')
  const expectedReuse = messages(base('FIELD_ID_NOT_REUSED'), reuse, settings)
  const expectedFresh = messages(base('FIELD_ID_NOT_REUSED'), fresh, settings)
  t.equal(expectedReuse.length, 1, 'the fixture commit reuses an id')
  t.same(expectedFresh, [], 'a fresh id above last-column-id is fine')
  for (let round = 0; round < 3; round++) {
    t.same(messages(shared, reuse, settings), expectedReuse, `round ${round}: the reuse is found`)
    t.same(messages(shared, fresh, settings), expectedFresh, `round ${round}: the fresh id passes`)
  }
  // The same base object with another schema made current: the history is not the one remembered.
  const other = { ...shared, currentSchemaId: shared.schemas[0]?.schemaId ?? 0 }
  t.same(messages(other, reuse, settings), messages({ ...base('FIELD_ID_NOT_REUSED'), currentSchemaId: other.currentSchemaId }, reuse, settings))
})

t.test('DROPPED_NAME_REUSED: one base object, both case options and different names, in turn', async t => {
  const shared = served(base('DROPPED_NAME_REUSED'))
  const same = read('DROPPED_NAME_REUSED', 'commit.json')
  const upper = renamed(same, 'coupon', 'COUPON')
  const other = renamed(same, 'coupon', 'voucher')
  const sensitive = only('DROPPED_NAME_REUSED', { caseSensitive: true })
  const insensitive = only('DROPPED_NAME_REUSED', { caseSensitive: false })
  const cases: Array<[Record<string, unknown>, RuleSettings, number]> = [
    [same, insensitive, 1], [upper, sensitive, 0], [upper, insensitive, 1], [other, insensitive, 0], [same, sensitive, 1]
  ]
  for (let round = 0; round < 2; round++) {
    for (const [commit, settings, count] of cases) {
      const got = messages(shared, commit, settings)
      t.same(got, messages(base('DROPPED_NAME_REUSED'), commit, settings), `round ${round}: the same findings as a fresh base`)
      t.equal(got.length, count)
    }
  }
})

/** A base over the given schema objects, as a new object each call (as a new ETag brings). */
function over (shared: TableMetadata, schemas: readonly Schema[], currentSchemaId = shared.currentSchemaId): TableMetadata {
  return served({ ...shared, schemas: [...schemas], currentSchemaId })
}

/** Marked as an upstream's answer, as the gate's loader marks what it reads: its history is kept. */
function served (m: TableMetadata): TableMetadata {
  markServed(m)
  return m
}

/** The same schemas as new objects: nothing remembered for them can answer. */
function cloned (schemas: readonly Schema[]): Schema[] {
  return schemas.map(s => structuredClone(s))
}

function current (b: TableMetadata): Schema {
  const s = b.schemas.find(x => x.schemaId === b.currentSchemaId)
  if (s === undefined) throw new Error('the base has no current schema')
  return s
}

/** The same base with no table uuid: its history is read from scratch, nothing kept is used. */
function scratch (b: TableMetadata): TableMetadata {
  return { ...b, tableUuid: undefined, schemas: cloned(b.schemas) }
}

/** Every id and name of a base's history as the two rules see it. */
function histories (b: TableMetadata, now: Schema): unknown {
  const ids = []
  for (let id = 0; id <= 40; id++) ids.push(historyOf(b, now).get(id) ?? null)
  const names = ['coupon', 'COUPON', 'id', 'amount', 'voucher'].map(n => [droppedNamed(b, now, n, true), droppedNamed(b, now, n.toLowerCase(), false)])
  return JSON.parse(JSON.stringify({ ids, names }))
}

t.test('the history summary: a new base object over the same schemas reads nothing again', async t => {
  const outcomes: string[] = []
  t.teardown(() => { configureTableHistory({}) })
  configureTableHistory({ onOutcome: o => outcomes.push(o) })
  const shared = served({ ...base('DROPPED_NAME_REUSED'), tableUuid: 'a1b2c3d4-0000-4000-8000-000000000001' })
  historyOf(shared, current(shared))
  const next = over(shared, shared.schemas)
  t.not(next, shared)
  historyOf(next, current(next))
  droppedNamed(next, current(next), 'coupon', false)
  t.same(outcomes, ['built', 'reused'], 'the second base object reuses the summary, once for both rules')
  t.same(histories(next, current(next)), histories(scratch(next), current(next)), 'and sees what a fresh read sees')
})

t.test('the history summary: a changed schema list is never answered from the old one', async t => {
  const shared = served({ ...base('DROPPED_NAME_REUSED'), tableUuid: 'a1b2c3d4-0000-4000-8000-000000000002' })
  const now = current(shared)
  const older = shared.schemas.filter(s => s !== now)
  t.ok(older.length > 0, 'the fixture has history')
  const variants: Array<[string, Schema[]]> = [
    ['an old schema removed', [now]],
    ['the order changed', [now, ...older]],
    ['an old schema replaced by an equal new object', [...cloned(older), now]],
    ['an old schema replaced by another under its id', [{ ...(older[0] as Schema), struct: { kind: 'struct', fields: [] } }, ...older.slice(1), now]]
  ]
  for (const [what, schemas] of variants) {
    histories(shared, now)
    const b = over(shared, schemas)
    t.same(histories(b, now), histories(scratch(b), now), `${what}: the history is the list's`)
  }
})

t.test('the history memos: random histories give the findings a fresh base gives', async t => {
  const ruleIds = ['FIELD_ID_NOT_REUSED', 'DROPPED_NAME_REUSED']
  const settings: RuleSettings = { mode: 'enforce', severity: id => ruleIds.includes(id) ? 'error' : 'off', options: () => ({}), isExcepted: () => false }
  const template = base('DROPPED_NAME_REUSED')
  const NAMES = ['a', 'b', 'c', 'A', 'd']
  // A pool of top-level columns (id, name); a schema is a subset of them, ids unique within it.
  const schemaArb = fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom(...NAMES)), { selector: c => c[0], minLength: 1, maxLength: 5 })
  const toSchema = (columns: Array<[number, string]>, schemaId: number): Schema => ({
    schemaId,
    identifierFieldIds: [],
    struct: { kind: 'struct', fields: columns.map(([id, name]) => ({ id, name, required: false, type: { kind: 'long' } })) }
  })
  fc.assert(fc.property(
    fc.array(schemaArb, { minLength: 1, maxLength: 5 }),
    fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 6 }), fc.nat(), schemaArb), { minLength: 1, maxLength: 6 }),
    (history, steps) => {
      // One pool of Schema objects; every step is a new base object over some of them.
      const pool = history.map((columns, i) => toSchema(columns, i))
      for (const [picks, currentPick, commitColumns] of steps) {
        const schemas = [...new Set(picks.map(p => pool[p % pool.length] as Schema))]
        const cur = pool[currentPick % pool.length] as Schema
        if (!schemas.includes(cur)) schemas.push(cur)
        const lastColumnId = 8
        const memo = served({ ...template, formatVersion: 2 as const, lastColumnId, schemas, currentSchemaId: cur.schemaId as number })
        const fresh = { ...memo, tableUuid: undefined, schemas: cloned(schemas) }
        const request = {
          updates: [
            { action: 'add-schema', schema: { type: 'struct', fields: commitColumns.map(([id, name]) => ({ id, name, required: false, type: 'long' })) } },
            { action: 'set-current-schema', 'schema-id': -1 }
          ]
        }
        const got = evaluateCommit({ base: memo, request, settings }).findings
        const want = evaluateCommit({ base: fresh, request, settings }).findings
        if (JSON.stringify(got) !== JSON.stringify(want)) return false
      }
      return true
    }
  ), { numRuns: 300 })
  t.pass('300 random histories agree')
})
