/**
 * Rules remember what depends on the base alone (the ids and names of its schema history) per base
 * object, because the ETag cache hands the same parsed base to many commits. These tests judge
 * several different commits against one base object, in turn, and check each answer is the one a
 * freshly read base gives: no commit may see another's answer.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { evaluateCommit } from '../../src/gate/evaluate-commit.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import type { RuleSettings } from '../../src/rules/rule.js'

const fixtureRoot = new URL('../fixtures/rules/', import.meta.url)

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
  const shared = base('FIELD_ID_NOT_REUSED')
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
  const shared = base('DROPPED_NAME_REUSED')
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
