/**
 * The gate's other write paths end to end (transactions, creates, staged creates, replace,
 * register, views), its answers when the upstream misbehaves, warnings, break-glass overrides, and
 * the audit line — captured from pino and searched for every secret the requests carried.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { loggerOptions } from '../../src/main/app.js'
import { mintOverride } from '../../src/policy/override-token.js'
import { startProxy, type ProxyOptions } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { startCatalog } from '../helpers/catalog.js'
import {
  clientShapes, cloneSchema, createFixtureTable, fieldByPath, loadMeta, postJson, posts, startInterposer,
  type Meta, type SchemaJson
} from '../helpers/gate-fixtures.js'

const SECRET = 'test-override-secret-0123456789'
const BEARER = 'opaque-bearer-token-s3cr3t-value'
const JWT = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: 'alice@example.com' })).toString('base64url')}.c2lnbmF0dXJlLXMzY3IzdA`

interface AuditLine { component?: string, msg?: string, audit?: Record<string, unknown> }

/** A pino destination that keeps every line, so tests can read audit records and grep for secrets. */
function logCapture (): { stream: Writable, lines: string[], audits: () => Array<Record<string, unknown>> } {
  const lines: string[] = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line)
      cb()
    }
  })
  const audits = (): Array<Record<string, unknown>> => lines
    .map(l => JSON.parse(l) as AuditLine)
    .filter(l => l.component === 'audit' && l.audit !== undefined)
    .map(l => l.audit as Record<string, unknown>)
  return { stream, lines, audits }
}

async function setup (t: Test, opts: { policy?: string, upstream?: string, catalogPrefix?: string, env?: Record<string, string> } = {}) {
  const catalog = await startCatalog(t, opts.catalogPrefix === undefined ? {} : { prefix: opts.catalogPrefix })
  const log = logCapture()
  const proxy = await startProxy(t, {
    upstream: opts.upstream ?? catalog.url,
    policy: opts.policy ?? 'builtin:spec',
    env: opts.env,
    app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream: log.stream } }
  } as unknown as ProxyOptions)
  const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
  return { catalog, proxy, ice, log }
}

function addColumn (meta: Meta, name: string, type: unknown = 'string'): SchemaJson {
  const s = cloneSchema(meta)
  s.fields.push({ id: meta['last-column-id'] + 1, name, required: false, type })
  return s
}

onEveryTransport(t, t => {
  t.test('transactions are all-or-nothing, with and without {prefix}', async t => {
    const { catalog, proxy, ice, log } = await setup(t, { catalogPrefix: 'wh' })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'a', 2)
    await createFixtureTable(ice, 'b', 2)
    const ma = await loadMeta(proxy.url, 'db', 'a')
    const mb = await loadMeta(proxy.url, 'db', 'b')
    const good = { identifier: { namespace: ['db'], name: 'a' }, ...(clientShapes.curl(ma, addColumn(ma, 'ok_col'), 'db', 'a') as object) }
    const badSchema = cloneSchema(mb)
    fieldByPath(badSchema, 'qty').type = 'string'
    const bad = { identifier: { namespace: ['db'], name: 'b' }, ...(clientShapes.curl(mb, badSchema, 'db', 'b') as object) }

    for (const path of ['/v1/transactions/commit', '/v1/wh/transactions/commit']) {
      catalog.clearRequests()
      const res = await postJson(`${proxy.url}${path}`, { 'table-changes': [good, bad] })
      t.equal(res.status, 400, `${path}: one bad change refuses the whole transaction`)
      const error = (res.json as { error: { message: string, stack: string[] } }).error
      t.match(error.message, 'db.b')
      t.match(error.message, 'TYPE_PROMOTION_VALID')
      t.ok(error.stack.every(l => l.startsWith('db.b: ')), 'each finding line names its table')
      t.equal(posts(catalog).length, 0, `${path}: nothing reached the upstream`)
    }
    t.equal((await loadMeta(proxy.url, 'db', 'a')).schemas.length, 1, 'the good table was not changed either')

    const good2 = { identifier: { namespace: ['db'], name: 'b' }, ...(clientShapes.curl(mb, addColumn(mb, 'ok_b'), 'db', 'b') as object) }
    catalog.clearRequests()
    const ok = await postJson(`${proxy.url}/v1/wh/transactions/commit`, { 'table-changes': [good, good2] })
    t.equal(ok.status, 204, ok.text)
    const sent = posts(catalog)[0]!.body.toString()
    t.equal(sent.split('"assert-current-schema-id"').length - 1, 2, 'each table change got its requirement injected')
    t.ok(cloneSchema(await loadMeta(proxy.url, 'db', 'a')).fields.some(f => f.name === 'ok_col'))
    t.ok(cloneSchema(await loadMeta(proxy.url, 'db', 'b')).fields.some(f => f.name === 'ok_b'))
    const last = log.audits().at(-1)!
    t.same(last.tables, ['db.a', 'db.b'])
    t.equal(last.verdict, 'allow')
    t.same(last.injected, ['db.a:assert-current-schema-id', 'db.a:assert-last-assigned-field-id', 'db.b:assert-current-schema-id', 'db.b:assert-last-assigned-field-id'])

    const noId = await postJson(`${proxy.url}/v1/transactions/commit`, { 'table-changes': [clientShapes.curl(ma, addColumn(ma, 'x'), 'db', 'a')] })
    t.equal(noId.status, 400)
    t.match((noId.json as { error: { message: string } }).error.message, 'table identifier is required')
  })

  t.test('a break-glass token in a transaction waives its own table\'s errors, never another\'s', async t => {
    const dir = t.testdir({ 'policy.yaml': 'version: 1\nextends: builtin:spec\nnamespaces:\n  strict:\n    rules:\n      COLUMN_NO_DROP: error\n' })
    const { catalog, proxy, ice } = await setup(t, { policy: join(dir, 'policy.yaml'), env: { ICEGUARD_OVERRIDE_SECRET: SECRET } })
    await ice.createNamespace({ namespace: ['strict'] })
    for (const name of ['a', 'b']) await createFixtureTable(ice, name, 2, 'strict')
    const token = mintOverride({ table: 'strict.a', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'incident 51', secret: SECRET })
    const change = async (name: string, edit: (meta: Meta) => SchemaJson) => {
      const meta = await loadMeta(proxy.url, 'strict', name)
      return { identifier: { namespace: ['strict'], name }, ...(clientShapes.curl(meta, edit(meta), 'strict', name) as object) }
    }
    const drop = (column: string) => (meta: Meta): SchemaJson => {
      const s = cloneSchema(meta)
      s.fields = s.fields.filter(f => f.name !== column)
      return s
    }

    catalog.clearRequests()
    const both = { 'table-changes': [await change('a', drop('qty')), await change('b', drop('qty'))] }
    const refused = await postJson(`${proxy.url}/v1/transactions/commit`, both, { 'x-iceguard-override': token })
    t.equal(refused.status, 400, 'a token for strict.a does not let strict.b drop a column')
    const error = (refused.json as { error?: { code: number, message: string, stack: string[] } } | undefined)?.error
    t.match(error, { code: 400, message: /strict\.b/ }, 'the refusal names the table the token does not cover')
    t.match(error?.message, 'COLUMN_NO_DROP')
    t.ok(error !== undefined && error.stack.length > 0 && error.stack.every(l => l.startsWith('strict.b: ')), 'every finding it lists is strict.b\'s')
    t.equal(posts(catalog).length, 0, 'nothing reached the upstream')

    const own = { 'table-changes': [await change('a', drop('qty')), await change('b', meta => addColumn(meta, 'note'))] }
    const allowed = await postJson(`${proxy.url}/v1/transactions/commit`, own, { 'x-iceguard-override': token })
    t.equal(allowed.status, 204, `the same token does waive strict.a's drop in a transaction (${allowed.text})`)
    t.equal(posts(catalog).length, 1, 'which is forwarded once')
  })

  t.test('creates, staged creates and create-or-replace', async t => {
    const { catalog, proxy, ice, log } = await setup(t, { catalogPrefix: 'wh' })
    await ice.createNamespace({ namespace: ['db'] })
    const badSchema = { type: 'struct', fields: [{ id: 1, name: 'a', required: true, type: 'double' }, { id: 2, name: 'a', required: false, type: 'string' }], 'identifier-field-ids': [1] }

    for (const staged of [false, true]) {
      catalog.clearRequests()
      const res = await postJson(`${proxy.url}/v1/wh/namespaces/db/tables`, { name: `bad_${String(staged)}`, schema: badSchema, 'stage-create': staged })
      t.equal(res.status, 400, `create (stage-create ${String(staged)}) with a bad schema: 400`)
      const message = (res.json as { error: { message: string } }).error.message
      t.match(message, 'FIELD_NAME_UNIQUE')
      t.match(message, 'IDENTIFIER_FIELD_VALID')
      t.equal(posts(catalog).length, 0, 'nothing forwarded')
    }

    // The commit that completes a staged create (Java: createTable stage-create, then this with assert-create).
    const staged = await postJson(`${proxy.url}/v1/wh/namespaces/db/tables`, { name: 'staged', schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }, 'stage-create': true })
    t.equal(staged.status, 200, staged.text)
    const createUpdates = (schema: unknown) => [
      { action: 'assign-uuid', uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1' },
      { action: 'upgrade-format-version', 'format-version': 2 },
      { action: 'add-schema', schema, 'last-column-id': 2 },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec: { 'spec-id': 0, fields: [] } },
      { action: 'set-default-spec', 'spec-id': -1 },
      { action: 'add-sort-order', 'sort-order': { 'order-id': 0, fields: [] } },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
      { action: 'set-location', location: 'file:///tmp/iceguard-staged' }
    ]
    catalog.clearRequests()
    const badCommit = await postJson(`${proxy.url}/v1/wh/namespaces/db/tables/staged`, { requirements: [{ type: 'assert-create' }], updates: createUpdates(badSchema) })
    t.equal(badCommit.status, 400, 'a staged create with a bad schema: 400, never 409 (Java would read "already exists")')
    t.equal((badCommit.json as { error: { type: string } }).error.type, 'IllegalArgumentException')
    t.equal(posts(catalog).length, 0)
    const goodSchema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'v', required: false, type: 'string' }], 'identifier-field-ids': [1] }
    const goodCommit = await postJson(`${proxy.url}/v1/wh/namespaces/db/tables/staged`, { requirements: [{ type: 'assert-create' }], updates: createUpdates(goodSchema) })
    t.equal(goodCommit.status, 200, goodCommit.text)
    t.notMatch(posts(catalog)[0]!.body.toString(), /assert-current-schema-id/, 'nothing injected into a staged create (assert-create must stay alone)')
    t.equal(log.audits().at(-1)!.flows?.toString(), 'staged-create')

    // CREATE OR REPLACE (Java replaceTransaction): ids kept by name, a type may change, no
    // assert-current-schema-id; recognised as a replace, not judged as an evolution.
    await createFixtureTable(ice, 'rep', 2)
    const meta = await loadMeta(proxy.url, 'db', 'rep')
    const replacement = cloneSchema(meta)
    fieldByPath(replacement, 'qty').type = 'string'
    replacement['schema-id'] = 1
    catalog.clearRequests()
    const replace = await postJson(`${proxy.url}/v1/namespaces/db/tables/rep`, {
      requirements: [{ type: 'assert-table-uuid', uuid: meta['table-uuid'] }, { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': meta['last-column-id'] }],
      updates: [
        { action: 'add-schema', schema: replacement, 'last-column-id': meta['last-column-id'] },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'remove-snapshot-ref', 'ref-name': 'main' },
        { action: 'set-properties', updates: { replaced: 'true' } }
      ]
    })
    t.equal(replace.status, 200, `create-or-replace is forwarded: ${replace.text}`)
    t.equal(log.audits().at(-1)!.flows?.toString(), 'replace', 'recognised as a replace')
    t.ok(posts(catalog)[0]!.body.toString().includes(`{"type":"assert-current-schema-id","current-schema-id":${meta['current-schema-id']}}`),
      'the validated current schema is pinned on a replace too')
    t.equal(fieldByPath(cloneSchema(await loadMeta(proxy.url, 'db', 'rep')), 'qty').type, 'string')

    // CREATE OR REPLACE of a table with no snapshot: Java sends no remove-snapshot-ref (there is no
    // main), and the replacement may bring required columns, since no row exists to lack them.
    await createFixtureTable(ice, 'rep_empty', 2)
    const empty = await loadMeta(proxy.url, 'db', 'rep_empty')
    const last = empty['last-column-id']
    const fresh = { type: 'struct', 'schema-id': 1, fields: [{ id: last + 1, name: 'key', required: true, type: 'int' }, { id: last + 2, name: 'data', required: true, type: 'string' }] }
    catalog.clearRequests()
    const replaceEmpty = await postJson(`${proxy.url}/v1/namespaces/db/tables/rep_empty`, {
      requirements: [{ type: 'assert-table-uuid', uuid: empty['table-uuid'] }, { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': last }],
      updates: [
        { action: 'add-schema', schema: fresh, 'last-column-id': last + 2 },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'add-spec', spec: { 'spec-id': 1, fields: [] } },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': { 'order-id': 0, fields: [] } },
        { action: 'set-default-sort-order', 'sort-order-id': -1 }
      ]
    })
    t.equal(replaceEmpty.status, 200, `replacing a table without rows by required columns is forwarded: ${replaceEmpty.text}`)
    t.equal(log.audits().at(-1)!.flows?.toString(), 'replace', 'recognised as a replace without remove-snapshot-ref')
    t.equal(posts(catalog).length, 1)
    t.ok(posts(catalog)[0]!.body.toString().includes('{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}'),
      'pinned to a table still without rows: an append in between turns the replace into a 409')
    // A second replace whose replacement equals the first schema: Java sends set-current-schema
    // alone. Its required fields (id, kind) come back with their schema, not as reused ids.
    const restore = await postJson(`${proxy.url}/v1/namespaces/db/tables/rep_empty`, {
      requirements: [{ type: 'assert-table-uuid', uuid: empty['table-uuid'] }],
      updates: [{ action: 'set-current-schema', 'schema-id': 0 }, { action: 'set-properties', updates: { replaced: 'again' } }]
    })
    t.equal(restore.status, 200, `a replace back to an earlier schema is forwarded: ${restore.text}`)
    t.equal(log.audits().at(-1)!.flows?.toString(), 'replace')
    t.equal((await loadMeta(proxy.url, 'db', 'rep_empty'))['current-schema-id'], 0, 'the catalog holds the earlier schema again')
    // With rows on main and no remove-snapshot-ref, the same switch is a revert, judged as one.
    const withRows = await postJson(`${proxy.url}/v1/namespaces/db/tables/rep_empty`, {
      requirements: [],
      updates: [
        { action: 'add-snapshot', snapshot: { 'snapshot-id': 1, 'sequence-number': 1, 'timestamp-ms': 1, 'manifest-list': 'file:///tmp/m.avro', summary: { operation: 'append' }, 'schema-id': 0 } },
        { action: 'set-snapshot-ref', 'ref-name': 'main', 'snapshot-id': 1, type: 'branch' }
      ]
    })
    t.equal(withRows.status, 200, withRows.text)
    const revert = await postJson(`${proxy.url}/v1/namespaces/db/tables/rep_empty`, {
      requirements: [{ type: 'assert-table-uuid', uuid: empty['table-uuid'] }],
      updates: [{ action: 'set-current-schema', 'schema-id': 1 }]
    })
    t.equal(revert.status, 400, 'bringing back required columns over rows that lack them is refused')
    t.match((revert.json as { error: { message: string } }).error.message, 'FIELD_ID_NOT_REUSED')
  })

  t.test('a stale requirement is answered in the catalog\'s own words', async t => {
    const { catalog, proxy, ice } = await setup(t)
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'stale', 2)
    const meta = await loadMeta(proxy.url, 'db', 'stale')
    const commit = clientShapes.java(meta, addColumn(meta, 'c'), 'db', 'stale') as { requirements: Array<Record<string, unknown>> }
    for (const r of commit.requirements) if (r.type === 'assert-current-schema-id') r['current-schema-id'] = 7
    catalog.clearRequests()
    const gated = await postJson(`${proxy.url}/v1/namespaces/db/tables/stale`, commit)
    t.equal(posts(catalog).length, 0, 'the gate saw the stale base and forwarded nothing')
    const direct = await postJson(`${catalog.url}/v1/namespaces/db/tables/stale`, commit)
    const error = (gated.json as { error: { message: string, type: string, code: number, stack: string[] } }).error
    t.equal(gated.status, 409)
    t.equal(error.type, 'CommitFailedException')
    t.equal(error.message, 'Requirement failed: current schema changed: expected id 7 != 0', 'Iceberg\'s text, nothing around it')
    t.equal(error.message, (direct.json as { error: { message: string } }).error.message, 'the catalog\'s own answer to the same commit')
    t.same(error.stack, ['db.stale: assert-current-schema-id: Requirement failed: current schema changed: expected id 7 != 0'], 'the stack names the table and the requirement')
  })

  t.test('register: allowed per policy scope, history checked and reported', async t => {
    const dir = t.testdir({})
    const policyPath = join(dir, 'policy.yaml')
    writeFileSync(policyPath, 'version: 1\nextends: builtin:spec\nnamespaces:\n  locked:\n    rules:\n      TABLE_NO_REGISTER: error\n')
    const { catalog, proxy, ice, log } = await setup(t, { policy: policyPath })
    await ice.createNamespace({ namespace: ['db'] })
    await ice.createNamespace({ namespace: ['locked'] })
    await createFixtureTable(ice, 'src', 2)
    // History the gate never saw: an illegal type change committed straight at the catalog.
    const meta = await loadMeta(catalog.url, 'db', 'src')
    const s = cloneSchema(meta)
    fieldByPath(s, 'qty').type = 'string'
    t.equal((await postJson(`${catalog.url}/v1/namespaces/db/tables/src`, clientShapes.curl(meta, s, 'db', 'src'))).status, 200, 'setup: the catalog itself accepts anything')
    const location = (JSON.parse(await (await request(`${catalog.url}/v1/namespaces/db/tables/src`)).body.text()) as { 'metadata-location': string })['metadata-location']

    catalog.clearRequests()
    const refused = await postJson(`${proxy.url}/v1/namespaces/locked/register`, { name: 'copy', 'metadata-location': location })
    t.equal(refused.status, 403, 'TABLE_NO_REGISTER: error refuses registering in that scope')
    t.match((refused.json as { error: { message: string, type: string } }).error.message, 'Cannot register table locked.copy')
    t.equal(posts(catalog).length, 0)

    const res = await postJson(`${proxy.url}/v1/namespaces/db/register`, { name: 'copy', 'metadata-location': location })
    t.equal(res.status, 200, res.text)
    t.match(String(res.headers['x-iceguard-warnings']), /TYPE_PROMOTION_VALID \(qty/, 'the history finding is reported in a header')
    const audit = log.audits().at(-1)!
    t.equal(audit.kind, 'register-table')
    t.same(audit.rules, ['TYPE_PROMOTION_VALID'])
    t.match(String(audit.summary), /history: 1 finding/)
  })

  t.test('views get structural checks only', async t => {
    const { catalog, proxy, log } = await setup(t)
    await postJson(`${proxy.url}/v1/namespaces`, { namespace: ['db'] })
    const viewBody = (fields: unknown[]) => ({
      name: 'v',
      schema: { type: 'struct', 'schema-id': 0, fields },
      'view-version': { 'version-id': 1, 'schema-id': 0, 'timestamp-ms': 1, summary: {}, representations: [{ type: 'sql', sql: 'select 1', dialect: 'spark' }], 'default-namespace': ['db'] },
      properties: {}
    })
    catalog.clearRequests()
    const dup = await postJson(`${proxy.url}/v1/namespaces/db/views`, viewBody([{ id: 1, name: 'a', required: false, type: 'int' }, { id: 1, name: 'b', required: false, type: 'int' }]))
    t.equal(dup.status, 400)
    t.match((dup.json as { error: { message: string } }).error.message, 'FIELD_ID_UNIQUE')
    t.equal(posts(catalog).length, 0)
    const fine = await postJson(`${proxy.url}/v1/namespaces/db/views`, viewBody([{ id: 1, name: 'a', required: false, type: 'int' }]))
    t.equal(posts(catalog).length, 1, 'a well-formed view is forwarded')
    t.equal(fine.status, 200, 'and the embedded catalog creates it')
    const uuid = (fine.json as { metadata: { 'view-uuid': string } }).metadata['view-uuid']
    // A view's schema may change freely: a type change that a table could not make passes.
    const replaceView = await postJson(`${proxy.url}/v1/namespaces/db/views/v`, {
      requirements: [],
      updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: [{ id: 1, name: 'a', required: true, type: 'string' }] } }]
    })
    t.equal(posts(catalog).length, 2, 'the view change was forwarded')
    t.equal(replaceView.status, 200, replaceView.text)
    t.same(log.audits().at(-1)!.flows, ['view'])

    // ALTER VIEW ... AS with a malformed schema (a field id twice) stops at the gate.
    const replace = (fields: unknown[]) => ({
      requirements: [{ type: 'assert-view-uuid', uuid }],
      updates: [
        { action: 'add-schema', schema: { type: 'struct', 'schema-id': 2, fields } },
        { action: 'add-view-version', 'view-version': { 'version-id': 2, 'schema-id': -1, 'timestamp-ms': 2, summary: {}, representations: [{ type: 'sql', sql: 'select 2', dialect: 'spark' }], 'default-namespace': ['db'] } },
        { action: 'set-current-view-version', 'view-version-id': -1 }
      ]
    })
    catalog.clearRequests()
    const badReplace = await postJson(`${proxy.url}/v1/namespaces/db/views/v`, replace([{ id: 1, name: 'a', required: false, type: 'long' }, { id: 1, name: 'b', required: false, type: 'long' }]))
    t.equal(badReplace.status, 400)
    t.match((badReplace.json as { error: { message: string } }).error.message, 'FIELD_ID_UNIQUE')
    t.equal(posts(catalog).length, 0, 'the malformed view commit never reached the catalog')
    const goodReplace = await postJson(`${proxy.url}/v1/namespaces/db/views/v`, replace([{ id: 1, name: 'a', required: false, type: 'long' }, { id: 2, name: 'b', required: false, type: 'long' }]))
    t.equal(goodReplace.status, 200, goodReplace.text)
    t.equal(posts(catalog).length, 1, 'the good one was forwarded')
    const loaded = await request(`${catalog.url}/v1/namespaces/db/views/v`)
    const view = await loaded.body.json() as { metadata: { 'current-version-id': number, versions: Array<{ 'version-id': number, 'schema-id': number }> } }
    t.equal(view.metadata['current-version-id'], 2, 'the new version landed in the catalog')
    t.equal(view.metadata.versions.find(v => v['version-id'] === 2)?.['schema-id'], 2)

    // ALTER VIEW with the same columns: the new version names a schema the view already has and
    // the commit adds none; the gate has no view to look it up in, the catalog has.
    catalog.clearRequests()
    const sameColumns = await postJson(`${proxy.url}/v1/namespaces/db/views/v`, {
      requirements: [{ type: 'assert-view-uuid', uuid }],
      updates: [
        { action: 'add-view-version', 'view-version': { 'version-id': 3, 'schema-id': 2, 'timestamp-ms': 3, summary: {}, representations: [{ type: 'sql', sql: 'select 3', dialect: 'spark' }], 'default-namespace': ['db'] } },
        { action: 'set-current-view-version', 'view-version-id': -1 }
      ]
    })
    t.equal(sameColumns.status, 200, sameColumns.text)
    t.equal(posts(catalog).length, 1, 'forwarded')
    const unknown = await postJson(`${proxy.url}/v1/namespaces/db/views/v`, {
      requirements: [{ type: 'assert-view-uuid', uuid }],
      updates: [
        { action: 'add-view-version', 'view-version': { 'version-id': 4, 'schema-id': -1, 'timestamp-ms': 4, summary: {}, representations: [{ type: 'sql', sql: 'select 4', dialect: 'spark' }], 'default-namespace': ['db'] } }
      ]
    })
    t.equal(unknown.status, 400, 'a version naming "the schema added last" when the commit adds none is still refused')
    t.match((unknown.json as { error: { message: string } }).error.message, 'CURRENT_SCHEMA_KNOWN')
  })

  t.test('upstream answers: 404/401/403 relayed, unreachable is 503, a lost answer is 502', async t => {
    const catalog = await startCatalog(t)
    const hop = await startInterposer(t, catalog.url)
    const log = logCapture()
    const proxy = await startProxy(t, { upstream: hop.url, policy: 'builtin:spec', app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream: log.stream } } } as unknown as ProxyOptions)
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 't', 2)
    const meta = await loadMeta(proxy.url, 'db', 't')
    const body = clientShapes.pyiceberg(meta, addColumn(meta, 'c'), 'db', 't')

    const missing = await postJson(`${proxy.url}/v1/namespaces/db/tables/nope`, clientShapes.curl(meta, addColumn(meta, 'c'), 'db', 'nope'))
    t.equal(missing.status, 404, 'a missing table is the upstream\'s 404')
    t.equal((missing.json as { error: { type: string } }).error.type, 'NoSuchTableException')

    for (const status of [401, 403]) {
      hop.respond = req => req.method === 'GET'
        ? { status, headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="x"' }, body: JSON.stringify({ error: { message: `no (${status})`, type: status === 401 ? 'NotAuthorizedException' : 'ForbiddenException', code: status } }) }
        : undefined
      catalog.clearRequests()
      const res = await postJson(`${proxy.url}/v1/namespaces/db/tables/t`, body, { authorization: `Bearer ${BEARER}` })
      t.equal(res.status, status, `${status} on the base load is relayed`)
      t.equal((res.json as { error: { message: string } }).error.message, `no (${status})`, 'with the upstream\'s own body')
      if (status === 401) t.equal(res.headers['www-authenticate'], 'Bearer realm="x"')
      t.equal(posts(catalog).length, 0, 'nothing forwarded')
    }
    t.equal(hop.seen.filter(r => r.method === 'GET').at(-1)!.headers.authorization, `Bearer ${BEARER}`, 'the base load carries the caller\'s own Authorization')

    hop.respond = req => req.method === 'GET' ? { status: 500, body: '{"error":{"message":"boom","type":"ServerError","code":500}}' } : undefined
    const broken = await postJson(`${proxy.url}/v1/namespaces/db/tables/t`, body)
    t.equal(broken.status, 503, 'a 5xx on the base load: nothing was forwarded, so 503, never "state unknown"')
    t.ok(broken.headers['retry-after'] !== undefined)

    hop.respond = req => req.method === 'POST' ? 'drop' : undefined
    catalog.clearRequests()
    const postsBefore = hop.seen.filter(r => r.method === 'POST').length
    const lost = await postJson(`${proxy.url}/v1/namespaces/db/tables/t`, body)
    t.ok(lost.status === 502 || lost.status === 504, `the connection died after the commit left: ${lost.status}`)
    t.equal((lost.json as { error: { type: string, code: number } }).error.type, 'CommitStateUnknownException')
    t.equal((lost.json as { error: { code: number } }).error.code, lost.status)
    t.equal(hop.seen.filter(r => r.method === 'POST').length - postsBefore, 1, 'the commit was sent once, never retried')
    hop.respond = undefined

    const down = await startProxy(t, { upstream: 'http://127.0.0.1:9', policy: 'builtin:spec' })
    const unreachable = await postJson(`${down.url}/v1/namespaces/db/tables/t`, body)
    t.equal(unreachable.status, 503, 'an unreachable upstream: 503')
    t.equal(unreachable.headers['retry-after'], '1')
    t.equal((unreachable.json as { error: { code: number } }).error.code, 503)
    t.ok(log.audits().every(a => typeof a.durationMs === 'number' && typeof a.requestId === 'string'))
  })

  t.test('warnings, break-glass overrides and the audit line', async t => {
    const dir = t.testdir({})
    const policyPath = join(dir, 'policy.yaml')
    writeFileSync(policyPath, 'version: 1\nextends: builtin:spec\nnamespaces:\n  warned:\n    rules:\n      COLUMN_NO_DROP: warn\n  strict:\n    rules:\n      COLUMN_NO_DROP: error\n')
    const { catalog, proxy, ice, log } = await setup(t, { policy: policyPath, env: { ICEGUARD_OVERRIDE_SECRET: SECRET } })
    for (const ns of ['warned', 'strict']) {
      await ice.createNamespace({ namespace: [ns] })
      await createFixtureTable(ice, 't', 2, ns)
    }
    const drop = (meta: Meta, name: string) => {
      const s = cloneSchema(meta)
      s.fields = s.fields.filter(f => f.name !== name)
      return s
    }

    let meta = await loadMeta(proxy.url, 'warned', 't')
    const warned = await postJson(`${proxy.url}/v1/namespaces/warned/tables/t`, clientShapes.java(meta, drop(meta, 'price'), 'warned', 't'), { authorization: `Bearer ${JWT}` })
    t.equal(warned.status, 200, 'a warning lets the commit through')
    t.match(String(warned.headers['x-iceguard-warnings']), /^COLUMN_NO_DROP \(price, field id \d+, decimal\(10, ?2\) -> none\)$/)
    let audit = log.audits().at(-1)!
    t.equal(audit.verdict, 'warn')
    t.same(audit.warnings, ['COLUMN_NO_DROP'])
    t.equal(audit.principal, 'unverified-sub:alice@example.com', 'the principal is the JWT subject, marked unverified, not the token')
    t.equal(audit.upstreamStatus, 200)

    meta = await loadMeta(proxy.url, 'strict', 't')
    const body = clientShapes.java(meta, drop(meta, 'price'), 'strict', 't')
    catalog.clearRequests()
    const denied = await postJson(`${proxy.url}/v1/namespaces/strict/tables/t`, body, { authorization: `Bearer ${BEARER}` })
    t.equal(denied.status, 400)
    t.match((denied.json as { error: { message: string } }).error.message, 'COLUMN_NO_DROP')
    audit = log.audits().at(-1)!
    t.equal(audit.verdict, 'deny')
    t.match(String(audit.principal), /^token:[0-9a-f]{12}$/, 'an opaque token is fingerprinted')

    const now = new Date()
    const tokens = {
      expired: mintOverride({ table: 'strict.t', rules: ['COLUMN_NO_DROP'], ttlSeconds: 1, reason: 'test', secret: SECRET, now: new Date(now.getTime() - 60_000) }),
      otherTable: mintOverride({ table: 'warned.t', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'test', secret: SECRET }),
      tampered: mintOverride({ table: 'strict.t', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'test', secret: 'another-secret-0123456789' }),
      otherRule: mintOverride({ table: 'strict.t', rules: ['COLUMN_NO_RENAME'], ttlSeconds: 600, reason: 'test', secret: SECRET })
    }
    for (const [what, token, pattern, status] of [
      ['expired', tokens.expired, /expired/, 400],
      ['for another table', tokens.otherTable, /is for table warned\.t, not strict\.t/, 400],
      ['signed with another secret', tokens.tampered, /signature does not match/, 400],
      ['for another rule', tokens.otherRule, /COLUMN_NO_DROP/, 400]
    ] as const) {
      const res = await postJson(`${proxy.url}/v1/namespaces/strict/tables/t`, body, { 'x-iceguard-override': token })
      t.equal(res.status, status, `an override token ${what}: ${status}`)
      t.match((res.json as { error: { message: string } }).error.message, pattern)
    }
    t.equal(posts(catalog).length, 0, 'none of them reached the upstream')

    const good = mintOverride({ table: 'strict.t', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'incident 42', secret: SECRET })
    // The dry run answers what the gate would with the same header, and forwards nothing.
    const dryRun = async (headers: Record<string, string>) => await postJson(`${proxy.url}/admin/v1/validate`, { table: { namespace: ['strict'], name: 't' }, request: body }, headers)
    const plain = await dryRun({})
    t.equal((plain.json as { verdict: string }).verdict, 'deny', 'dry run without the header: deny')
    t.equal((plain.json as { override?: unknown }).override, undefined)
    const withToken = await dryRun({ 'x-iceguard-override': good })
    t.equal(withToken.status, 200)
    t.match(withToken.json, { verdict: 'warn', override: { table: 'strict.t', rules: ['COLUMN_NO_DROP'], id: String, 'expires-at': String }, findings: [{ rule: 'COLUMN_NO_DROP', severity: 'warn' }] }, 'dry run with the token: warn, and says which override applied')
    const refused = await dryRun({ 'x-iceguard-override': tokens.tampered })
    t.equal(refused.status, 400, 'a token that does not verify is refused in a dry run too')
    t.match((refused.json as { error: { message: string } }).error.message, /^Cannot apply x-iceguard-override: .*signature does not match/i)
    t.equal(posts(catalog).length, 0, 'dry runs sent nothing')
    const overridden = await postJson(`${proxy.url}/v1/namespaces/strict/tables/t`, body, { 'x-iceguard-override': good, authorization: `Bearer ${BEARER}` })
    t.equal(overridden.status, 200, 'a valid override turns the error into a warning')
    t.match(String(overridden.headers['x-iceguard-warnings']), 'COLUMN_NO_DROP')
    audit = log.audits().at(-1)!
    t.equal(audit.verdict, 'warn')
    t.equal(typeof audit.overrideId, 'string')
    t.same(audit.overrideRules, ['COLUMN_NO_DROP'])
    t.equal(posts(catalog).length, 1)
    t.equal(posts(catalog)[0]!.headers['x-iceguard-override'], undefined, 'the token never travels upstream')

    // Every decision has its line, and no line anywhere holds a secret the requests carried.
    const all = log.lines.join('\n')
    for (const secret of [BEARER, JWT, JWT.split('.')[2]!, good, SECRET]) t.notOk(all.includes(secret), 'no secret in the logs')
    const decided = log.audits()
    t.ok(decided.length >= 8, 'one audit line per decision')
    for (const a of decided) {
      t.ok(typeof a.requestId === 'string' && Array.isArray(a.tables) && typeof a.verdict === 'string' && typeof a.summary === 'string' && typeof a.status === 'number')
    }
  })
})
