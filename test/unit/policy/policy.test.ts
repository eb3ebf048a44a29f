import { EventEmitter } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parseSchema } from '../../../src/iceberg/parse.js'
import type { Schema } from '../../../src/iceberg/types.js'
import {
  checkContract, loadPolicy, loadPolicyFile, mintOverride, parseContract, parsePolicy, parseTtl,
  PolicyError, PolicyStore, presetPolicy, resolvePolicy, verifyOverride, withOverride, type Policy
} from '../../../src/policy/index.js'
import { policyJsonSchema } from '../../../src/policy/policy-json-schema.js'
import { PLATFORM_RULES } from '../../../src/engine/rules/platform/index.js'
import type { RuleSettings } from '../../../src/engine/rules/rule.js'

const fixtures = new URL('../../fixtures/policies/', import.meta.url).pathname
const ident = (dotted: string): { namespace: string[], name: string } => {
  const parts = dotted.split('.')
  return { namespace: parts.slice(0, -1), name: parts[parts.length - 1] as string }
}

function schemaOf (json: unknown): Schema {
  const { schema, issues } = parseSchema(json)
  if (!schema) throw new Error(JSON.stringify(issues))
  return schema
}

t.test('presets', async t => {
  const spec = resolvePolicy(presetPolicy('builtin:spec'), ident('db.t'))
  for (const rule of PLATFORM_RULES) t.equal(spec.severity(rule.id), 'off', `${rule.id} off under builtin:spec`)
  t.equal(spec.mode, 'enforce')
  t.equal(spec.compatibility, 'NONE')

  const rec = resolvePolicy(presetPolicy('builtin:recommended'), ident('db.t'))
  for (const rule of PLATFORM_RULES) t.equal(rec.severity(rule.id), rule.defaultSeverity, `${rule.id} at its default under builtin:recommended`)
  t.equal(rec.severity('DROP_THEN_ADD_SAME_NAME'), 'error')
  t.equal(rec.severity('DROPPED_NAME_REUSED'), 'warn')
  t.equal(rec.compatibility, 'BACKWARD')
  t.equal(rec.explain().rules.DROP_THEN_ADD_SAME_NAME?.source, 'builtin:recommended')

  t.equal(loadPolicy(undefined).source, 'builtin:recommended', 'no policy means builtin:recommended')
  t.equal(loadPolicy('builtin:spec').source, 'builtin:spec')
  t.throws(() => loadPolicy('builtin:strict'), /Unknown preset builtin:strict/)
})

t.test('scope resolution', async t => {
  const policy = loadPolicyFile(join(fixtures, 'scoped.yaml'))
  const now = new Date('2025-06-01T00:00:00Z')

  t.test('global over preset', async t => {
    const p = resolvePolicy(policy, ident('sales.deals'), now)
    t.equal(p.mode, 'enforce')
    t.equal(p.severity('COLUMN_NO_DROP'), 'warn')
    t.equal(p.explain().rules.COLUMN_NO_DROP?.source, 'global')
    t.equal(p.severity('DROP_THEN_ADD_SAME_NAME'), 'error', 'untouched rules keep the preset')
    t.equal(p.explain().rules.DROP_THEN_ADD_SAME_NAME?.source, 'builtin:recommended')
    t.same(p.options('COLUMN_NAME_PATTERN'), { pattern: '^[a-z][a-z0-9_]*$' })
    t.same(p.explain().scopes, ['builtin:recommended', 'global'])
  })

  t.test('namespace over global, table over namespace', async t => {
    const p = resolvePolicy(policy, ident('finance.orders'), now)
    const e = p.explain()
    t.equal(p.severity('COLUMN_NO_DROP'), 'error')
    t.equal(e.rules.COLUMN_NO_DROP?.source, 'namespace:finance')
    t.equal(p.compatibility, 'FULL')
    t.same(e.compatibility, { value: 'FULL', source: 'namespace:finance' })
    t.same(e.mode, { value: 'enforce', source: 'table:finance.*' })
    t.equal(p.severity('NEW_COLUMNS_MAX'), 'error')
    t.same(p.options('NEW_COLUMNS_MAX'), { max: 3 }, 'options merge key by key; the table wins')
    t.same(e.rules.NEW_COLUMNS_MAX?.optionSources, { max: 'table:finance.orders' })
    t.same(e.scopes, ['builtin:recommended', 'global', 'namespace:finance', 'table:finance.*', 'table:finance.orders'],
      'the exact table glob is more specific than finance.*')
    t.equal(p.contract?.columns.length, 3)
    t.same(e.contract, { file: 'contracts/orders.yaml', source: 'table:finance.orders', strict: false, columns: 3 })
    t.equal(p.options('SCHEMA_CONTRACT').contract, p.contract)
    t.equal(p.options('SCHEMA_COMPATIBILITY').level, 'FULL')
  })

  t.test('nested namespaces: deeper wins, literal beats glob at equal depth', async t => {
    const p = resolvePolicy(policy, ident('finance.sandbox.t1'), now)
    const e = p.explain()
    t.same(e.scopes, ['builtin:recommended', 'global', 'namespace:finance', 'namespace:finance.*', 'namespace:finance.sandbox', 'table:finance.sandbox.*'])
    t.same(e.mode, { value: 'warn', source: 'table:finance.sandbox.*' })
    t.same(e.rules.COLUMN_NO_DROP?.source, 'namespace:finance.*')
    t.equal(p.severity('COLUMN_NO_DROP'), 'warn')
    t.equal(p.compatibility, 'FULL', 'inherited from the parent namespace')

    const deep = resolvePolicy(policy, ident('finance.eu.west.t'), now)
    t.same(deep.explain().scopes, ['builtin:recommended', 'global', 'namespace:finance', 'namespace:finance.*'],
      'finance.* covers finance.eu and its children')
  })

  t.test('globs', async t => {
    t.equal(resolvePolicy(policy, ident('events_raw.clicks'), now).mode, 'freeze')
    t.equal(resolvePolicy(policy, ident('events_raw.clicks'), now).severity('COLUMN_NO_RENAME'), 'error')
    t.equal(resolvePolicy(policy, ident('events_raw.x.y'), now).mode, 'freeze', '*_raw covers nested namespaces')
    t.equal(resolvePolicy(policy, ident('staging.anything'), now).mode, 'warn')
    t.equal(resolvePolicy(policy, ident('stagingx.t'), now).mode, 'enforce', 'a literal namespace is not a prefix match')
  })

  t.test('later entry wins among equal specificity', async t => {
    const { policy: p } = parsePolicy([
      'version: 1',
      'namespaces:',
      '  "a.*": { mode: warn }',
      '  "*.b": { mode: freeze }'
    ].join('\n'), 'inline.yaml')
    t.ok(p)
    t.same(resolvePolicy(p as Policy, ident('a.b.t')).explain().mode, { value: 'freeze', source: 'namespace:*.b' })
    const { policy: q } = parsePolicy([
      'version: 1',
      'namespaces:',
      '  "*.b": { mode: freeze }',
      '  "a.*": { mode: warn }'
    ].join('\n'), 'inline.yaml')
    t.same(resolvePolicy(q as Policy, ident('a.b.t')).explain().mode, { value: 'warn', source: 'namespace:a.*' })
  })

  t.test('exceptions: path, table glob, expiry', async t => {
    const p = resolvePolicy(policy, ident('finance.orders'), now)
    t.equal(p.isExcepted('COLUMN_NO_DROP', 'legacy_code'), true)
    t.equal(p.isExcepted('COLUMN_NO_DROP', 'legacy_code.part'), true, 'covers nested fields')
    t.equal(p.isExcepted('COLUMN_NO_DROP', 'order_id'), false)
    t.equal(p.isExcepted('COLUMN_NO_DROP'), false, 'a path exception is not table-wide')
    t.equal(p.isExcepted('COLUMN_NO_RENAME', 'x'), false, 'expired exceptions no longer apply')
    const listed = p.explain().exceptions
    t.same(listed.map(x => [x.rules, x.active, x.source]), [
      [['COLUMN_NO_DROP'], true, 'table:finance.orders'],
      [['COLUMN_NO_RENAME'], false, 'table:finance.orders']
    ])
    const later = resolvePolicy(policy, ident('finance.orders'), new Date('2030-01-01T00:00:00Z'))
    t.equal(later.isExcepted('COLUMN_NO_DROP', 'legacy_code'), false, 'an exception stops applying on its expiry date')

    t.equal(resolvePolicy(policy, ident('legacy.t'), now).isExcepted('COLUMN_DOC_REQUIRED', 'any.path'), true)
    t.equal(resolvePolicy(policy, ident('legacy.t'), now).isExcepted('COLUMN_DOC_REQUIRED'), true)
    t.equal(resolvePolicy(policy, ident('other.t'), now).isExcepted('COLUMN_DOC_REQUIRED'), false)
  })
})

t.test('bad policy files report every error with line and column', async t => {
  const err = t.throws(() => loadPolicyFile(join(fixtures, 'invalid-many.yaml'))) as unknown as PolicyError
  t.ok(err instanceof PolicyError)
  const got = err.issues.map(i => `${i.line}:${i.column} ${i.message}`)
  const expect: Array<[number, RegExp]> = [
    [2, /mode: must be one of "enforce", "warn", "freeze", got "enforced"/],
    [4, /rules\.COLUMN_NO_DROP: must be one of "error", "warn", "off", got "fatal"/],
    [5, /rules\.COLUMN_NO_DRP: unknown rule id \(did you mean COLUMN_NO_DROP\?\)/],
    [6, /rules\.COLUMN_NAME_PATTERN\.pattern: not a valid regular expression/],
    [7, /rules\.NEW_COLUMNS_MAX\.max: expected integer/],
    [10, /namespaces\.finance\.compatibility: must be one of "NONE"/],
    [11, /namespaces\.finance\.colour: unknown key/],
    [13, /tables\.orders: a table glob is namespace\.table/],
    [17, /exceptions\.0\.expires: /]
  ]
  for (const [line, re] of expect) {
    t.ok(err.issues.some(i => i.line === line && re.test(i.message) && i.source.endsWith('invalid-many.yaml') && i.column > 0), `line ${line}: ${re}`)
  }
  t.equal(err.issues.length, expect.length, `exactly these problems: ${got.join(' | ')}`)
  t.match(err.message, /invalid-many\.yaml:2:7: mode: must be one of/, 'message lists file:line:col')
  t.same(err.issues.map(i => i.line), [...err.issues.map(i => i.line)].sort((a, b) => a - b), 'sorted by position')

  const syntax = parsePolicy(readFileSync(join(fixtures, 'invalid-syntax.yaml'), 'utf8'), 'invalid-syntax.yaml')
  t.equal(syntax.policy, undefined)
  t.ok(syntax.errors.length > 0)
  t.same([syntax.errors[0]?.line, syntax.errors[0]?.column], [3, 19])
  t.match(syntax.errors[0]?.message, /Nested mappings are not allowed/)

  const contract = t.throws(() => loadPolicyFile(join(fixtures, 'invalid-contract.yaml'))) as unknown as PolicyError
  const lines = contract.issues.map(i => `${i.source}:${i.line}: ${i.message}`)
  t.ok(lines.some(l => /^contracts\/bad-orders\.yaml:3: .*decimal precision must be between 1 and 38/.test(l)), lines.join('\n'))
  t.ok(lines.some(l => /^contracts\/bad-orders\.yaml:4: .*unknown type "strang"/.test(l)))
  t.ok(lines.some(l => /^contracts\/bad-orders\.yaml:5: Duplicate contract column "order_id"/.test(l)))
  t.ok(lines.some(l => /^contracts\/bad-orders\.yaml:6: .*nullable: unknown key/.test(l)))
  t.ok(lines.some(l => /invalid-contract\.yaml:6: tables\.finance\.customers\.contract: cannot read contract file contracts\/missing\.yaml: ENOENT/.test(l)))

  t.match(parsePolicy('', 'empty.yaml').errors[0]?.message ?? '', /expected a mapping/)
  t.match(parsePolicy('mode: warn', 'nov.yaml').errors[0]?.message ?? '', /version: required/)
  t.throws(() => loadPolicyFile(join(fixtures, 'does-not-exist.yaml')), /Cannot read policy file: ENOENT/)
})

t.test('policy store: bad reload keeps the last good policy; a good one takes effect', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-policy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'policy.yaml')
  writeFileSync(file, 'version: 1\nmode: warn\n')
  const store = new PolicyStore(file, { debounceMs: 10 })
  t.equal(store.resolve(ident('db.t')).mode, 'warn')

  writeFileSync(file, 'version: 1\nmode: sideways\n')
  const bad = store.reload()
  t.equal(bad.ok, false)
  t.match(bad.ok ? '' : bad.error, /Kept the previous policy: [\s\S]*policy\.yaml:2:7: mode: must be one of/)
  t.equal(bad.ok ? 0 : bad.issues[0]?.line, 2)
  t.equal(store.resolve(ident('db.t')).mode, 'warn', 'still the old policy')
  t.match(store.lastError ?? '', /mode: must be one of/)

  writeFileSync(file, 'version: 1\nmode: freeze\n')
  const good = store.reload()
  t.equal(good.ok, true)
  t.equal(store.resolve(ident('db.t')).mode, 'freeze')
  t.equal(store.lastError, undefined)

  // The watcher reloads on its own after a change.
  const events: string[] = []
  // The watcher does not hold the process open (the server does); the test must.
  const keepAlive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(keepAlive))
  const reloaded = new Promise<void>(resolve => {
    const stop = store.watch(e => { events.push(e.type); stop(); resolve() })
  })
  writeFileSync(file, 'version: 1\nmode: enforce\n')
  await reloaded
  t.same(events, ['reloaded'])
  t.equal(store.resolve(ident('db.t')).mode, 'enforce')

  t.throws(() => new PolicyStore(join(dir, 'missing.yaml')), PolicyError, 'start-up fails on a bad policy')
  t.doesNotThrow(() => new PolicyStore('builtin:spec').watch(() => {})(), 'presets have nothing to watch')
})

t.test('a policy watcher that fails is reported and set up again, and the next change still reloads', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-policy-watch-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'policy.yaml')
  writeFileSync(file, 'version: 1\nmode: warn\n')
  // A stand-in for fs.watch: the test emits its `error` (what a removed or remounted folder gives).
  const watchers: Array<{ emitter: EventEmitter, onChange: (f: string | null) => void, closed: boolean }> = []
  const store = new PolicyStore(file, {
    debounceMs: 5,
    rewatchMs: 20,
    watchFolder: (_dir, onChange) => {
      const w = { emitter: new EventEmitter(), onChange, closed: false }
      watchers.push(w)
      return Object.assign(w.emitter, { close: () => { w.closed = true } }) as never
    }
  })
  const keepAlive = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(keepAlive))
  const events: string[] = []
  let next = (): void => {}
  const stop = store.watch(e => { events.push(e.type); next() })
  t.teardown(stop)
  t.equal(watchers.length, 1, 'the folder is watched')
  t.equal(watchers[0]?.emitter.listenerCount('error'), 1, 'with a listener for its errors')
  const rearmed = new Promise<void>(resolve => { const wait = setInterval(() => { if (watchers.length === 2) { clearInterval(wait); resolve() } }, 5) })
  t.doesNotThrow(() => watchers[0]?.emitter.emit('error', Object.assign(new Error('watch ENOENT'), { code: 'ENOENT', syscall: 'watch' })), 'an error event does not throw')
  t.same(events, ['watch-failed'], 'the failure is reported')
  t.ok(watchers[0]?.closed, 'the failed watcher is closed')
  await rearmed
  writeFileSync(file, 'version: 1\nmode: freeze\n')
  const reloaded = new Promise<void>(resolve => { next = resolve })
  watchers[1]?.onChange('policy.yaml')
  await reloaded
  t.same(events, ['watch-failed', 'reloaded'], 'the new watcher reloads on the next change')
  t.equal(store.resolve(ident('db.t')).mode, 'freeze')
})

t.test('contracts', async t => {
  const schema = schemaOf({
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'order_id', required: true, type: 'long', doc: 'Order key' },
      { id: 2, name: 'order_total', required: false, type: 'decimal(10, 2)' },
      { id: 3, name: 'customer', required: false, type: { type: 'struct', fields: [{ id: 4, name: 'id', required: false, type: 'int' }] } },
      { id: 5, name: 'tags', required: false, type: { type: 'list', 'element-id': 6, element: 'string', 'element-required': false } },
      { id: 7, name: 'ts', required: false, type: 'timestamp_ns' }
    ]
  })
  const parsed = parseContract([
    'columns:',
    '  - { name: order_id, type: LONG, required: true, doc: "Order key" }',
    '  - { name: order_total, type: "decimal(12, 2)" }',
    '  - { name: customer.id, type: integer }',
    '  - { name: tags, type: "list<String>" }',
    '  - { name: missing_col, type: "fixed[16]" }',
    '  - { name: ts, type: timestamp_ns, required: true }',
    'strict: false'
  ].join('\n'), 'c.yaml')
  t.same(parsed.errors, [])
  const contract = parsed.contract
  if (!contract) throw new Error('no contract')

  const v2 = checkContract(contract, schema, 2)
  t.same(v2.map(v => [v.kind, v.path]), [
    ['type', 'order_total'],
    ['missing', 'missing_col'],
    ['unsupported-type', 'ts'],
    ['required', 'ts']
  ])
  t.match(v2[0]?.message, /Cannot satisfy contract column order_total \(id 2\): type is decimal\(10, 2\), the contract requires decimal\(12, 2\)/,
    'a type reachable by promotion still violates')
  t.same(checkContract(contract, schema, 3).map(v => v.kind), ['type', 'missing', 'required'], 'v3 types are fine on v3 tables')

  const strict = parseContract('columns:\n  - { name: order_id, type: long }\n  - { name: customer, type: struct }\nstrict: true\n', 's.yaml').contract
  if (!strict) throw new Error('no contract')
  t.same(checkContract(strict, schema, 3).map(v => [v.kind, v.path]), [
    ['unlisted', 'order_total'],
    ['unlisted', 'customer.id'],
    ['unlisted', 'tags'],
    ['unlisted', 'ts']
  ], 'strict lists every unlisted column once; a bare struct does not cover its fields')
  const full = parseContract('columns:\n  - { name: customer, type: "struct<id: int>" }\n  - { name: tags, type: "list<string>" }\nstrict: true\n', 'f.yaml').contract
  if (!full) throw new Error('no contract')
  t.same(checkContract(full, schema, 3).map(v => v.path), ['order_id', 'order_total', 'ts'], 'a full nested type covers its fields')

  const doc = parseContract('columns:\n  - { name: order_id, type: long, doc: "Primary key" }\n', 'd.yaml').contract
  if (!doc) throw new Error('no contract')
  t.match(checkContract(doc, schema, 2)[0]?.message, /doc is "Order key", the contract requires "Primary key"/)

  for (const [text, re] of [
    ['decimal(0, 0)', /precision must be between 1 and 38/],
    ['decimal(10, 11)', /scale must be between 0 and the precision/],
    ['fixed[0]', /fixed length must be at least 1/],
    ['map<string>', /expected ","/],
    ['list<int', /expected ">"/]
  ] as const) {
    const r = parseContract(`columns:\n  - { name: a, type: "${text}" }\n`, 'x.yaml')
    t.match(r.errors[0]?.message, re, text)
    t.equal(r.errors[0]?.line, 2)
  }
})

t.test('override tokens', async t => {
  const secret = 'a-long-enough-test-secret'
  const now = new Date('2025-06-01T12:00:00Z')
  const token = mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttlSeconds: 3600, reason: 'INC-42 hotfix', secret, now })

  const ok = verifyOverride(token, { table: 'db.orders', secret, now: new Date('2025-06-01T12:30:00Z') })
  t.equal(ok.ok, true)
  if (ok.ok) {
    t.same(ok.rules, ['COLUMN_NO_DROP'])
    t.equal(ok.reason, 'INC-42 hotfix')
    t.equal(ok.expiresAt.toISOString(), '2025-06-01T13:00:00.000Z')
    t.match(ok.id, /^[A-Za-z0-9_-]{16}$/)
  }
  t.not(token, mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttlSeconds: 3600, reason: 'INC-42 hotfix', secret, now }), 'each token has its own id')

  const expired = verifyOverride(token, { table: 'db.orders', secret, now: new Date('2025-06-01T13:00:00Z') })
  t.same(expired.ok ? '' : expired.error.replace(/ [A-Za-z0-9_-]{16} /, ' ID '), 'Override token ID expired at 2025-06-01T13:00:00.000Z')

  const wrongTable = verifyOverride(token, { table: 'db.customers', secret, now })
  t.match(wrongTable.ok ? '' : wrongTable.error, /is for table db\.orders, not db\.customers/)

  const [p, body, sig] = token.split('.') as [string, string, string]
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString())
  payload.rules = ['COLUMN_NO_DROP', 'SCHEMA_CONTRACT']
  const forged = `${p}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`
  t.match((v => v.ok ? '' : v.error)(verifyOverride(forged, { table: 'db.orders', secret, now })), /signature does not match/)
  const flipped = `${p}.${body}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`
  t.match((v => v.ok ? '' : v.error)(verifyOverride(flipped, { table: 'db.orders', secret, now })), /signature does not match/)
  t.match((v => v.ok ? '' : v.error)(verifyOverride(token, { table: 'db.orders', secret: 'another-secret-value-xyz', now })), /signature does not match/)
  for (const bad of ['', 'abc', 'igo1.x', 'igo2.a.b', 'igo1.a b.c', `${p}.${body}`]) {
    const r = verifyOverride(bad, { table: 'db.orders', secret, now })
    t.match(r.ok ? '' : r.error, /malformed/, `malformed: "${bad.slice(0, 12)}"`)
  }

  // Wrong rule: the token waives only what it names.
  const base: RuleSettings = { mode: 'enforce', severity: () => 'error', options: () => ({}), isExcepted: () => false }
  const over = withOverride(base, ok.ok ? ok.rules : [])
  t.equal(over.severity('COLUMN_NO_DROP'), 'warn')
  t.equal(over.severity('COLUMN_NO_RENAME'), 'error', 'a rule the token does not name still denies')
  t.equal(withOverride({ ...base, severity: () => 'off' }, ['COLUMN_NO_DROP']).severity('COLUMN_NO_DROP'), 'off')
  t.equal(over.mode, 'enforce')

  t.throws(() => mintOverride({ table: 'db.orders', rules: ['X'], ttlSeconds: 60, reason: 'r', secret: 'short', now }), /at least 16 characters/)
  t.throws(() => mintOverride({ table: 'orders', rules: ['X'], ttlSeconds: 60, reason: 'r', secret, now }), /namespace\.table/)
  t.throws(() => mintOverride({ table: 'db.orders', rules: [], ttlSeconds: 60, reason: 'r', secret, now }), /at least one rule/)
  t.throws(() => mintOverride({ table: 'db.orders', rules: ['X'], ttlSeconds: 60, reason: ' ', secret, now }), /reason is required/)
  t.throws(() => mintOverride({ table: 'db.orders', rules: ['X'], ttlSeconds: 0, reason: 'r', secret, now }), /ttl must be/)
  t.throws(() => mintOverride({ table: 'db.orders', rules: ['X'], ttlSeconds: 60, reason: 'r', secret, now }), /unknown rule id "X"/, 'a token must name rules that exist')

  t.equal(parseTtl('1h'), 3600)
  t.equal(parseTtl('90s'), 90)
  t.equal(parseTtl('15m'), 900)
  t.equal(parseTtl('2d'), 172800)
  t.equal(parseTtl('1h30m'), 5400)
  t.equal(parseTtl('120'), 120)
  for (const bad of ['', '1x', 'h', '0', '0h', '-1h', '1.5h']) t.throws(() => parseTtl(bad), /Invalid ttl/, bad)
})

t.test('openapi/policy.schema.json is generated from PolicySchema', async t => {
  const committed = readFileSync(new URL('../../../openapi/policy.schema.json', import.meta.url), 'utf8')
  t.equal(committed, policyJsonSchema(), 'out of date: run npx tsx scripts/gen-policy-schema.ts')
  const schema = JSON.parse(committed)
  for (const rule of PLATFORM_RULES) t.ok(schema.properties.rules.properties[rule.id], `${rule.id} is described`)
})

t.test('the example policy loads', async t => {
  const example = new URL('../../../examples/', import.meta.url).pathname
  const policy = loadPolicyFile(join(example, 'policy.yaml'))
  const orders = resolvePolicy(policy, ident('finance.orders'))
  t.equal(orders.contract?.source, 'contracts/orders.yaml', 'the example contract is attached to finance.orders')
  t.equal(resolvePolicy(policy, ident('staging.events')).mode, 'warn')
})

t.test('every platform rule is documented', async t => {
  const rules = readFileSync(new URL('../../../docs/rules.md', import.meta.url), 'utf8')
  const policyDoc = readFileSync(new URL('../../../docs/policy.md', import.meta.url), 'utf8')
  t.match(rules, /^## Platform rules$/m)
  for (const rule of PLATFORM_RULES) {
    t.match(rules, new RegExp(`^### ${rule.id}$`, 'm'), `docs/rules.md has a section for ${rule.id}`)
    t.match(policyDoc, `(rules.md#${rule.id.toLowerCase()})`, `docs/policy.md lists ${rule.id}`)
    const row = new RegExp(`\\| \\[\`${rule.id}\`\\]\\(rules\\.md#${rule.id.toLowerCase()}\\) \\| \\**${rule.defaultSeverity}\\**`)
    t.match(policyDoc, row, `docs/policy.md gives ${rule.id}'s recommended severity (${rule.defaultSeverity})`)
  }
})
