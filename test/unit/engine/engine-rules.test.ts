import { readdirSync, readFileSync } from 'node:fs'
import { parse as parseLossless, isSafeNumber, LosslessNumber } from 'lossless-json'
import t from 'tap'
import { decide, explain } from '../../../src/engine/decide.js'
import { evaluateCommit, evaluateCreate } from '../../../src/engine/evaluate-commit.js'
import { parseCommitBody } from '../../../src/json/parse-commit-body.js'
import { parseTableMetadata } from '../../../src/iceberg/parse.js'
import type { TableMetadata } from '../../../src/iceberg/types.js'
import { ALL_RULES, ruleById, ruleCatalogue, SPEC_RULES, TABLE_FROZEN } from '../../../src/engine/rules/index.js'
import type { Finding, Rule, RuleSettings } from '../../../src/engine/rules/rule.js'
import { runRules } from '../../../src/engine/rules/run-rules.js'
import { SPEC_ONLY_SETTINGS, specOnlySettings } from '../../../src/engine/rules/settings.js'

const fixtureRoot = new URL('../../fixtures/rules/', import.meta.url)
const docs = readFileSync(new URL('../../../docs/rules.md', import.meta.url), 'utf8')

/** Parses JSON as catalogs send it: 64-bit ids stay exact. */
function readJson (url: URL): unknown {
  return parseLossless(readFileSync(url, 'utf8'), undefined, (text: string) => isSafeNumber(text) ? Number(text) : new LosslessNumber(text))
}

function loadBase (url: URL): TableMetadata {
  const { metadata, issues } = parseTableMetadata(readJson(url))
  if (metadata === undefined) throw new Error(`fixture base does not parse: ${JSON.stringify(issues)}`)
  return metadata
}

/** Only `ruleId` is on, as buf isolates a rule in its fixtures. */
function only (ruleId: string, mode: RuleSettings['mode'] = 'enforce'): RuleSettings {
  return { mode, severity: id => id === ruleId ? 'error' : 'off', options: () => ({}), isExcepted: () => false }
}

const pick = (f: Finding): Record<string, unknown> => ({
  rule: f.rule,
  ...(f.fieldId === undefined ? {} : { fieldId: f.fieldId }),
  ...(f.path === undefined ? {} : { path: f.path })
})

t.test('every spec rule has a fixture folder, a docs section, and the shape rules promise', async t => {
  const folders = new Set(readdirSync(fixtureRoot))
  for (const rule of SPEC_RULES) {
    t.ok(folders.has(rule.id), `${rule.id} has a fixture folder`)
    t.match(rule.id, /^[A-Z][A-Z0-9_]+$/, `${rule.id} is UPPER_SNAKE`)
    t.equal(rule.category, 'spec')
    t.equal(rule.defaultSeverity, 'error')
    t.ok(rule.purpose.length > 10, `${rule.id} has a purpose`)
    t.match(docs, new RegExp(`^### ${rule.id}$`, 'm'), `${rule.id} has a docs section`)
  }
  t.equal(new Set(SPEC_RULES.map(r => r.id)).size, SPEC_RULES.length, 'ids are unique')
})

t.test('rule fixtures: base + commit give exactly the expected findings', async t => {
  for (const id of readdirSync(fixtureRoot).filter(d => ruleById(d)?.category === 'spec').sort()) {
    const dir = new URL(`${id}/`, fixtureRoot)
    const base = loadBase(new URL('base.json', dir))
    const request = readJson(new URL('commit.json', dir)) as { requirements?: unknown[], updates?: unknown[] }
    const expected = readJson(new URL('expected.json', dir))
    const isolated = evaluateCommit({ base, request, settings: only(id) })
    t.same(isolated.findings.map(pick), expected, `${id}: findings`)
    t.equal(isolated.verdict, 'deny', `${id}: denied`)
    for (const f of isolated.findings) t.match(f.message, /^Cannot /, `${id}: message form`)
    t.ok(isolated.explanation.includes(id), `${id}: explanation names the rule`)
    // With every rule on, the fixture's rule still reports the same, and nothing crashes.
    const all = evaluateCommit({ base, request, settings: SPEC_ONLY_SETTINGS })
    t.same(all.findings.filter(f => f.rule === id).map(pick), expected, `${id}: same with all spec rules on`)
  }
})

/**
 * More cases of a rule: `<RULE_ID>/cases/<name>.json` holds `description`, `source` (the spec
 * section or peer test it follows), `commit`, `expected` and, when the folder's base.json does not
 * fit, its own `base`. The commit is read as the gate reads a request body (parseCommitBody: `1.0`
 * stays `1.0`), so a case judges exactly what a client would send.
 */
t.test('rule fixture cases: each gives exactly its expected findings', async t => {
  for (const id of readdirSync(fixtureRoot).sort()) {
    const dir = new URL(`${id}/`, fixtureRoot)
    if (!readdirSync(dir).includes('cases')) continue
    t.ok(ruleById(id)?.category === 'spec', `${id}: cases belong to a spec rule`)
    for (const file of readdirSync(new URL('cases/', dir)).filter(f => f.endsWith('.json')).sort()) {
      const parsed = parseCommitBody(readFileSync(new URL(`cases/${file}`, dir)))
      if (!parsed.ok) throw new Error(`${id}/cases/${file}: ${parsed.message}`)
      const c = parsed.value as { description?: unknown, source?: unknown, base?: unknown, commit: { requirements?: unknown[], updates?: unknown[] }, expected: unknown }
      t.type(c.description, 'string', `${id}/${file}: says what it shows`)
      t.type(c.source, 'string', `${id}/${file}: cites its source`)
      let base = loadBase(new URL('base.json', dir))
      if (c.base !== undefined) {
        const read = parseTableMetadata(c.base)
        if (read.metadata === undefined) throw new Error(`${id}/cases/${file}: base does not parse: ${JSON.stringify(read.issues)}`)
        base = read.metadata
      }
      const isolated = evaluateCommit({ base, request: c.commit, settings: only(id) })
      const expected = canonJson(c.expected)
      t.same(isolated.findings.map(pick), expected, `${id}/${file}: ${String(c.description)}`)
      t.equal(isolated.verdict, (expected as unknown[]).length > 0 ? 'deny' : 'allow', `${id}/${file}: verdict`)
      for (const f of isolated.findings) t.match(f.message, /^Cannot /, `${id}/${file}: message form`)
    }
  }
})

/** Lossless numbers of a parsed fixture as plain numbers (the expected findings hold small ids only). */
function canonJson (v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x: unknown) => x instanceof LosslessNumber ? Number(x.toString()) : x))
}

t.test('fixture bases keep 64-bit snapshot ids exact', async t => {
  const base = loadBase(new URL('TYPE_PROMOTION_VALID/base.json', fixtureRoot))
  t.equal(base.refs.main, '3055729675574597004')
  const ok = evaluateCommit({
    base,
    request: { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': new LosslessNumber('3055729675574597004') }], updates: [] },
    settings: SPEC_ONLY_SETTINGS
  })
  t.equal(ok.verdict, 'allow')
  const stale = evaluateCommit({
    base,
    request: { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': new LosslessNumber('3055729675574597005') }], updates: [] },
    settings: SPEC_ONLY_SETTINGS
  })
  t.equal(stale.verdict, 'conflict')
  t.match(stale.explanation, /branch main has changed: expected id 3055729675574597005 != 3055729675574597004/)
})

t.test('runRules: severity, off, flows, exceptions, warn mode, throwing rules', async t => {
  const base = loadBase(new URL('TYPE_PROMOTION_VALID/base.json', fixtureRoot))
  const request = readJson(new URL('TYPE_PROMOTION_VALID/commit.json', fixtureRoot)) as { updates: unknown[] }
  const ev = evaluateCommit({ base, request, settings: SPEC_ONLY_SETTINGS })
  const ctx = { flow: ev.flow, base, proposed: ev.proposed as TableMetadata, baseSchema: ev.baseSchema, proposedSchema: ev.proposedSchema!, changes: ev.changes, addedSchemas: [] }
  const rule = ruleById('TYPE_PROMOTION_VALID') as Rule
  t.equal(runRules([rule], ctx, SPEC_ONLY_SETTINGS)[0]?.severity, 'error')
  t.equal(runRules([rule], ctx, { ...SPEC_ONLY_SETTINGS, severity: () => 'warn' })[0]?.severity, 'warn')
  t.same(runRules([rule], ctx, { ...SPEC_ONLY_SETTINGS, severity: () => 'off' }), [])
  t.equal(runRules([rule], ctx, specOnlySettings('warn'))[0]?.severity, 'warn', 'warn mode lowers errors')
  t.same(runRules([rule], ctx, { ...SPEC_ONLY_SETTINGS, isExcepted: (id, path) => id === rule.id && path === 'price' }), [], 'exception drops it')
  t.same(runRules([rule], { ...ctx, flow: 'replace' }, SPEC_ONLY_SETTINGS), [], 'replace may change types')
  const boom: Rule = { id: 'BOOM', category: 'platform', purpose: 'throws', defaultSeverity: 'error', check () { throw new Error('bad') } }
  const f = runRules([boom], ctx, { ...SPEC_ONLY_SETTINGS, severity: () => 'error' })
  t.equal(f[0]?.rule, 'BOOM')
  t.match(f[0]?.message, /Cannot evaluate rule BOOM: bad/)
  const withOptions: Rule = {
    id: 'OPTS',
    category: 'platform',
    purpose: 'reads options',
    defaultSeverity: 'warn',
    check: c => [{ rule: 'OPTS', message: `Cannot x: ${String(c.options.v)}` }]
  }
  t.equal(runRules([withOptions], ctx, { ...SPEC_ONLY_SETTINGS, severity: () => 'warn', options: () => ({ v: 42 }) })[0]?.message, 'Cannot x: 42')
  t.same(SPEC_ONLY_SETTINGS.severity('SOME_PLATFORM_RULE'), 'off')
})

t.test('catalogue lists every rule with its doc anchor', async t => {
  const cat = ruleCatalogue()
  t.equal(cat.length, ALL_RULES.length + (ALL_RULES.some(r => r.id === TABLE_FROZEN) ? 0 : 1))
  const promo = cat.find(r => r.id === 'TYPE_PROMOTION_VALID')
  t.same(promo, { id: 'TYPE_PROMOTION_VALID', category: 'spec', defaultSeverity: 'error', purpose: ruleById('TYPE_PROMOTION_VALID')?.purpose, doc: '/rules/TYPE_PROMOTION_VALID' })
  t.ok(cat.some(r => r.id === TABLE_FROZEN))
  t.match(docs, /^### TABLE_FROZEN$/m)
  t.equal(ruleById('NOPE'), undefined)
})

const v2 = (): TableMetadata => loadBase(new URL('TYPE_PROMOTION_VALID/base.json', fixtureRoot))
const addSchema = (fields: unknown[], ident: number[] = [1]): unknown[] => [
  { action: 'add-schema', schema: { type: 'struct', 'identifier-field-ids': ident, fields } },
  { action: 'set-current-schema', 'schema-id': -1 }
]
const baseFields = (m: TableMetadata): unknown[] => {
  const schema = m.schemas.find(s => s.schemaId === m.currentSchemaId)
  return JSON.parse(JSON.stringify((schema as unknown as { struct: { fields: unknown[] } }).struct.fields))
}
const fieldsJson = (): Array<Record<string, unknown>> => [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'name', required: false, type: 'string' },
  { id: 3, name: 'price', required: false, type: 'decimal(10, 2)' },
  { id: 4, name: 'd', required: false, type: 'date' },
  { id: 5, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 6, name: 'zip', required: false, type: 'string' }, { id: 7, name: 'city', required: false, type: 'string' }] } },
  { id: 8, name: 'tags', required: false, type: { type: 'list', 'element-id': 9, element: 'string', 'element-required': false } },
  { id: 10, name: 'attrs', required: false, type: { type: 'map', 'key-id': 11, key: 'string', 'value-id': 12, value: 'int', 'value-required': false } }
]
void baseFields

t.test('evaluateCommit: flows, verdicts and explanations', async t => {
  const base = v2()
  const legal = [...fieldsJson(), { id: 13, name: 'note', required: false, type: 'string' }]
  const ok = evaluateCommit({ base, request: { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }], updates: addSchema(legal) }, settings: SPEC_ONLY_SETTINGS })
  t.equal(ok.verdict, 'allow')
  t.equal(ok.flow, 'update')
  t.equal(ok.schemaTouched, true)
  t.match(ok.summary, /\+ added {5}13 note: string \(optional\)/)
  t.match(ok.explanation, /Commit allowed \(1 schema change, no findings\)/)

  const stale = evaluateCommit({ base, request: { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 5 }], updates: addSchema([{ id: 99, name: 'x', required: true, type: 'int' }]) }, settings: SPEC_ONLY_SETTINGS })
  t.equal(stale.verdict, 'conflict', 'a stale base stops before the rules')
  t.same(stale.findings, [])
  t.same(stale.conflicts, [{ type: 'assert-current-schema-id', message: 'Requirement failed: current schema changed: expected id 5 != 0' }])

  const narrowed = fieldsJson()
  ;(narrowed[2] as { type: string }).type = 'decimal(8, 2)'
  const bad = evaluateCommit({ base, request: { updates: addSchema(narrowed) }, settings: SPEC_ONLY_SETTINGS })
  t.equal(bad.verdict, 'deny')
  t.equal(bad.explanation, 'Schema change rejected (1 error): TYPE_PROMOTION_VALID (price, field id 3, decimal(10, 2) -> decimal(8, 2)): Cannot change column type: price (id 3): decimal(10, 2) -> decimal(8, 2)')
  t.same(bad.findings[0], {
    rule: 'TYPE_PROMOTION_VALID',
    severity: 'error',
    fieldId: 3,
    path: 'price',
    oldType: 'decimal(10, 2)',
    newType: 'decimal(8, 2)',
    message: 'Cannot change column type: price (id 3): decimal(10, 2) -> decimal(8, 2)',
    explanation: bad.findings[0]?.explanation
  })
  const warned = evaluateCommit({ base, request: { updates: addSchema(narrowed) }, settings: specOnlySettings('warn') })
  t.equal(warned.verdict, 'warn')
  t.match(warned.explanation, /^Commit allowed with 1 warning/)

  const frozen = evaluateCommit({ base, request: { updates: addSchema(legal) }, settings: specOnlySettings('freeze') })
  t.equal(frozen.verdict, 'deny')
  t.equal(frozen.findings[0]?.rule, TABLE_FROZEN)
  const data = evaluateCommit({ base, request: { updates: [{ action: 'set-properties', updates: { owner: 'x' } }] }, settings: specOnlySettings('freeze') })
  t.equal(data.verdict, 'allow', 'a data commit passes a frozen table')
  t.equal(data.schemaTouched, false)
  const spec = evaluateCommit({ base, request: { updates: [{ action: 'add-spec', spec: { fields: [] } }, { action: 'set-default-spec', 'spec-id': -1 }] }, settings: specOnlySettings('freeze') })
  t.equal(spec.verdict, 'deny', 'a spec change is a schema touch')

  // Revert: Java sends only set-current-schema to an older id.
  const history = evaluateCommit({ base, request: { updates: addSchema(legal) }, settings: SPEC_ONLY_SETTINGS }).proposed as TableMetadata
  const revert = evaluateCommit({ base: history, request: { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 1 }], updates: [{ action: 'set-current-schema', 'schema-id': 0 }] }, settings: SPEC_ONLY_SETTINGS })
  t.equal(revert.flow, 'revert')
  t.equal(revert.verdict, 'allow', 'reverting an optional add is fine')
  t.match(revert.summary, /! dropped {3}13 note: string/)

  // Revert that resurrects a dropped required field is refused.
  const dropped = fieldsJson().filter(f => f.id !== 1)
  const afterDrop = evaluateCommit({ base, request: { updates: addSchema(dropped, []) }, settings: SPEC_ONLY_SETTINGS })
  t.equal(afterDrop.verdict, 'allow', 'dropping an identifier together with its identifier entry is deliberate')
  const back = evaluateCommit({ base: afterDrop.proposed, request: { updates: [{ action: 'set-current-schema', 'schema-id': 0 }] }, settings: SPEC_ONLY_SETTINGS })
  t.equal(back.flow, 'revert')
  t.same(back.findings.map(f => [f.rule, f.fieldId]), [['FIELD_ID_NOT_REUSED', 1]])

  // Replace (CREATE OR REPLACE): types may change under an id.
  const replaced = fieldsJson()
  ;(replaced[1] as { type: unknown }).type = 'int'
  const replace = evaluateCommit({
    base,
    request: { requirements: [{ type: 'assert-table-uuid', uuid: base.tableUuid }], updates: [...addSchema(replaced), { action: 'remove-snapshot-ref', 'ref-name': 'main' }] },
    settings: SPEC_ONLY_SETTINGS
  })
  t.equal(replace.flow, 'replace')
  t.equal(replace.verdict, 'allow')

  // View: structural checks only.
  const view = evaluateCommit({ request: { updates: [{ action: 'add-schema', schema: { type: 'struct', fields: [{ id: 1, name: 'a', required: true, type: 'variant' }, { id: 1, name: 'a', required: false, type: 'int' }] } }, { action: 'add-view-version', 'view-version': { 'version-id': 1, 'schema-id': -1, 'timestamp-ms': 1, summary: {}, representations: [], 'default-namespace': ['db'] } }] }, settings: SPEC_ONLY_SETTINGS, target: 'view' })
  t.equal(view.flow, 'view')
  t.same(view.findings.map(f => f.rule).sort(), ['FIELD_ID_UNIQUE', 'FIELD_NAME_UNIQUE'])

  // Staged create: assert-create with no base.
  const staged = evaluateCommit({ request: { requirements: [{ type: 'assert-create' }], updates: [{ action: 'upgrade-format-version', 'format-version': 2 }, ...addSchema([{ id: 1, name: 'a', required: true, type: 'int' }], [])] }, settings: SPEC_ONLY_SETTINGS })
  t.equal(staged.flow, 'staged-create')
  t.equal(staged.verdict, 'allow')
  t.equal(staged.proposed?.formatVersion, 2)
  const exists = evaluateCommit({ base, request: { requirements: [{ type: 'assert-create' }], updates: [] }, settings: SPEC_ONLY_SETTINGS })
  t.equal(exists.verdict, 'conflict')
  t.match(exists.explanation, /table already exists/)

  const malformed = evaluateCommit({ base, request: { requirements: [{ type: 'assert-magic' }], updates: [{ action: 'ADD-SCHEMA' }, 'x'] }, settings: SPEC_ONLY_SETTINGS })
  t.equal(malformed.verdict, 'deny')
  t.same(malformed.findings.map(f => f.rule), ['REQUEST_WELL_FORMED', 'REQUEST_WELL_FORMED', 'REQUEST_WELL_FORMED'])
  t.match(malformed.explanation, /unknown requirement type: assert-magic/)
  t.match(malformed.explanation, /Cannot apply add-schema: schema is missing \(at updates\[0\]\.schema\)/)
})

t.test('evaluateCreate: a CreateTableRequest as an empty table plus its changes', async t => {
  const request = {
    name: 'orders',
    schema: { type: 'struct', 'identifier-field-ids': [1], fields: [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'ts', required: false, type: 'timestamp' }] },
    'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' }] },
    'write-order': { 'order-id': 1, fields: [{ 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] },
    properties: { 'format-version': '2' }
  }
  const ok = evaluateCreate({ request, settings: SPEC_ONLY_SETTINGS })
  t.equal(ok.flow, 'create')
  t.equal(ok.verdict, 'allow')
  t.equal(ok.proposed?.defaultSortOrderId, 1)
  t.equal(ok.proposed?.partitionSpecs.find(s => s.specId === ok.proposed?.defaultSpecId)?.fields.length, 1)
  t.match(ok.summary, /\+ added {5}1 id: long \(required\)\n\+ added {5}2 ts: timestamp \(optional\)/)

  const bad = evaluateCreate({
    request: { ...request, schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'timestamp_ns' }, { id: 2, name: 'p', required: false, type: 'decimal(40, 2)' }] } },
    settings: SPEC_ONLY_SETTINGS
  })
  t.equal(bad.verdict, 'deny')
  t.match(bad.explanation, /REQUEST_WELL_FORMED: Cannot parse type: "decimal\(40, 2\)": decimal precision must be 1\.\.38, got 40 \(at schema\.fields\[1\]\.type\)/)

  const v1 = evaluateCreate({ request: { ...request, properties: { 'format-version': '1' }, schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'timestamp_ns' }, { id: 2, name: 'ts', required: false, type: 'date' }] } }, settings: SPEC_ONLY_SETTINGS })
  t.same(v1.findings.map(f => [f.rule, f.path]), [['FORMAT_VERSION_TYPES', 'id']])
  const dropped = evaluateCreate({ request: { ...request, 'partition-spec': { fields: [{ 'source-id': 9, 'field-id': 1000, name: 'x', transform: 'identity' }] } }, settings: SPEC_ONLY_SETTINGS })
  t.same(dropped.findings.map(f => f.rule), ['PARTITION_SOURCE_NOT_DROPPED'])
  t.match(dropped.findings[0]?.message, /Cannot find source column for partition field x: id 9/)
  t.equal(evaluateCreate({ request: 'nope', settings: SPEC_ONLY_SETTINGS }).verdict, 'deny')
  t.equal(evaluateCreate({ request: { name: 'x' }, settings: SPEC_ONLY_SETTINGS }).verdict, 'deny')
})

t.test('decide and explain', async t => {
  const warn: Finding = { rule: 'X', severity: 'warn', message: 'Cannot a: b' }
  const err: Finding = { rule: 'Y', severity: 'error', message: 'Cannot c: d', fieldId: 3, path: 'p' }
  t.equal(decide({ conflicts: [], findings: [], mode: 'enforce', schemaTouched: true }).verdict, 'allow')
  t.equal(decide({ conflicts: [], findings: [warn], mode: 'enforce', schemaTouched: true }).verdict, 'warn')
  t.equal(decide({ conflicts: [], findings: [warn, err], mode: 'enforce', schemaTouched: true }).verdict, 'deny')
  t.equal(decide({ conflicts: [{ type: 'assert-create', message: 'm' }], findings: [err], mode: 'enforce', schemaTouched: true }).verdict, 'conflict')
  t.equal(decide({ conflicts: [], findings: [], mode: 'freeze', schemaTouched: false }).verdict, 'allow')
  t.equal(decide({ conflicts: [], findings: [], mode: 'freeze', schemaTouched: true }).findings[0]?.rule, TABLE_FROZEN)
  t.equal(explain('deny', [err, warn], [], 2), 'Schema change rejected (1 error): Y (p, field id 3): Cannot c: d; warnings: X: Cannot a: b')
})

t.test('PARTITION_NAME_NOT_TAKEN: which names collide with a partition field, as Java rebinds specs', async t => {
  const dir = new URL('PARTITION_NAME_NOT_TAKEN/', fixtureRoot)
  const base = loadBase(new URL('base.json', dir))
  // Base: d (id 4) partitioned by day(d) named d_day; columns id, name, price, d, address, tags, attrs.
  const fields = (readJson(new URL('commit.json', dir)) as { updates: Array<{ schema?: { fields: unknown[] } }> }).updates[0]?.schema?.fields.slice(0, 7) ?? []
  const commit = (schemaFields: unknown[], extra: unknown[] = []): { requirements: unknown[], updates: unknown[] } => ({
    requirements: [],
    updates: [{ action: 'add-schema', schema: { type: 'struct', 'identifier-field-ids': [1], fields: schemaFields } }, { action: 'set-current-schema', 'schema-id': -1 }, ...extra]
  })
  const rulesOf = (request: { requirements: unknown[], updates: unknown[] }, on = base): string[] =>
    evaluateCommit({ base: on, request, settings: only('PARTITION_NAME_NOT_TAKEN') }).findings.map(f => `${f.rule} ${f.path ?? ''} ${f.fieldId ?? ''}`)

  t.same(rulesOf(commit([...fields, { id: 13, name: 'other', required: false, type: 'int' }])), [], 'an unrelated new column')
  t.same(rulesOf(commit([...fields, { id: 13, name: 'D_DAY', required: false, type: 'int' }])), [], 'names are compared case-sensitively, as Java does')
  const renamed = fields.map(f => (f as { id: number }).id === 2 ? { ...(f as object), name: 'd_day' } : f)
  t.same(rulesOf(commit(renamed)), ['PARTITION_NAME_NOT_TAKEN d_day 2'], 'a rename into the partition name')
  // Java 1.11: once the source column is gone the (historical) spec is not name-checked.
  const withoutD = fields.filter(f => (f as { id: number }).id !== 4)
  t.same(rulesOf(commit([...withoutD, { id: 13, name: 'd_day', required: false, type: 'int' }])), [], 'source dropped: no name check (PARTITION_SOURCE_NOT_DROPPED judges the drop)')
  // An identity partition field named like its own source is no conflict.
  const identity = commit(fields, [{ action: 'add-spec', spec: { fields: [{ 'source-id': 2, 'field-id': 1001, name: 'name', transform: 'identity' }] } }])
  t.same(rulesOf(identity), [], 'identity partition named after its own source')
  const stolen = commit(fields, [{ action: 'add-spec', spec: { fields: [{ 'source-id': 2, 'field-id': 1001, name: 'price', transform: 'identity' }] } }])
  t.same(rulesOf(stolen), ['PARTITION_NAME_NOT_TAKEN price 3'], 'a new spec whose field takes a column name')
  const message = evaluateCommit({ base, request: commit(renamed), settings: only('PARTITION_NAME_NOT_TAKEN') }).findings[0]?.message
  t.equal(message, 'Cannot use column name: d_day (id 2): partition field d_day (day of d) in spec 0 has that name')

  // A conflict the base already has is not this commit's doing.
  const { metadata: conflicted } = parseTableMetadata({
    ...(readJson(new URL('base.json', dir)) as object),
    'partition-specs': [{ 'spec-id': 0, fields: [{ 'source-id': 4, 'field-id': 1000, name: 'name', transform: 'day' }] }]
  })
  if (conflicted === undefined) throw new Error('conflicted base does not parse')
  t.same(rulesOf(commit([...fields, { id: 13, name: 'other', required: false, type: 'int' }]), conflicted), [], 'an old conflict is not reported again')
})
