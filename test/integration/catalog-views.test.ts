/**
 * The embedded catalog's view API over HTTP on 127.0.0.1:0: create, load, exists, list (paged),
 * replace (what the Java client sends for ALTER VIEW ... AS), requirements, rename, drop,
 * register-view, version retention, persistence, bad bodies, and tables and views never sharing
 * a name. iceberg-js has no view methods, so views travel as raw HTTP; it drives the table side.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { startEmbeddedCatalog, type EmbeddedCatalog, type EmbeddedCatalogOptions } from '../../src/dev-catalog/index.js'

interface Res { status: number, headers: Record<string, string | string[] | undefined>, text: string, json: any }

async function start (t: Test, opts: EmbeddedCatalogOptions = {}): Promise<EmbeddedCatalog> {
  const catalog = await startEmbeddedCatalog({ memory: true, ...opts })
  t.teardown(() => catalog.close())
  return catalog
}

async function call (c: EmbeddedCatalog, method: string, path: string, body?: unknown): Promise<Res> {
  const res = await request(c.url + path, {
    method: method as 'GET',
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json' }
  })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) }
}

function isError (t: Test, res: Res, status: number, type: string, message?: RegExp | string): void {
  t.equal(res.status, status, `status ${status}: ${res.text}`)
  t.equal(res.json?.error?.code, status, 'code equals the status')
  t.equal(res.json?.error?.type, type)
  if (message !== undefined) t.match(res.json.error.message, message)
}

const viewSchema = (fields: unknown[] = [{ id: 5, name: 'id', required: true, type: 'long' }, { id: 7, name: 'name', required: false, type: 'string' }]) =>
  ({ type: 'struct', 'schema-id': 3, fields })

const sql = (text: string, dialect = 'spark') => ({ type: 'sql', sql: text, dialect })

const viewVersion = (over: object = {}) => ({
  'version-id': 9,
  'timestamp-ms': 1,
  'schema-id': 3,
  summary: { 'engine-name': 'spark', 'engine-version': '3.5.1' },
  representations: [sql('select id, name from db.t')],
  'default-namespace': ['db'],
  ...over
})

const createBody = (name: string, over: object = {}) => ({
  name,
  schema: viewSchema(),
  'view-version': viewVersion(),
  properties: { comment: 'a view' },
  ...over
})

async function setup (t: Test, opts: EmbeddedCatalogOptions = {}): Promise<EmbeddedCatalog> {
  const c = await start(t, opts)
  t.equal((await call(c, 'POST', '/v1/namespaces', { namespace: ['db'] })).status, 200)
  return c
}

async function createView (t: Test, c: EmbeddedCatalog, name: string, over: object = {}, ns = 'db'): Promise<Res> {
  const res = await call(c, 'POST', `/v1/namespaces/${ns}/views`, createBody(name, over))
  t.equal(res.status, 200, `view ${name} created: ${res.text}`)
  return res
}

/** What the Java client sends for ALTER VIEW ... AS (RESTViewOperations: replace on the client's builder). */
const replaceBody = (uuid: string, query: string, fields?: unknown[]) => ({
  requirements: [{ type: 'assert-view-uuid', uuid }],
  updates: [
    ...(fields === undefined ? [] : [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields } }]),
    { action: 'add-view-version', 'view-version': viewVersion({ 'version-id': 2, 'timestamp-ms': 2000, 'schema-id': fields === undefined ? 0 : -1, representations: [sql(query)] }) },
    { action: 'set-current-view-version', 'view-version-id': -1 }
  ]
})

t.test('/v1/config advertises every view endpoint with the spec\'s spelling', async t => {
  const c = await start(t)
  const endpoints = (await call(c, 'GET', '/v1/config')).json.endpoints as string[]
  for (const e of [
    'GET /v1/{prefix}/namespaces/{namespace}/views',
    'POST /v1/{prefix}/namespaces/{namespace}/views',
    'GET /v1/{prefix}/namespaces/{namespace}/views/{view}',
    'HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}',
    'POST /v1/{prefix}/namespaces/{namespace}/views/{view}',
    'DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}',
    'POST /v1/{prefix}/views/rename',
    'POST /v1/{prefix}/namespaces/{namespace}/register-view'
  ]) t.ok(endpoints.includes(e), e)
  t.ok(endpoints.includes('GET /v1/{prefix}/namespaces/{namespace}/tables/{table}'), 'table routes keep {table}')
})

t.test('createView builds version 1 on fresh ids; load, HEAD and list agree', async t => {
  const c = await setup(t)
  const before = Date.now()
  const created = await createView(t, c, 'v')
  const { metadata, 'metadata-location': location } = created.json
  t.match(location, /\/db\/v\/metadata\/00000-[0-9a-f-]+\.metadata\.json$/)
  t.same(Object.keys(metadata), ['view-uuid', 'format-version', 'location', 'properties', 'schemas', 'current-version-id', 'versions', 'version-log'])
  t.match(metadata['view-uuid'], /^[0-9a-f-]{36}$/)
  t.equal(metadata['format-version'], 1)
  t.match(metadata.location, /^file:\/\/.*\/db\/v$/)
  t.same(metadata.properties, { comment: 'a view' })
  // Java BaseViewBuilder.create: ids assigned fresh from 1, schema 0, version 1.
  t.same(metadata.schemas, [{
    type: 'struct',
    'schema-id': 0,
    fields: [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'name', required: false, type: 'string' }]
  }])
  t.equal(metadata['current-version-id'], 1)
  t.equal(metadata.versions.length, 1)
  const v1 = metadata.versions[0]
  t.same(Object.keys(v1), ['version-id', 'timestamp-ms', 'schema-id', 'summary', 'default-namespace', 'representations'])
  t.equal(v1['version-id'], 1)
  t.equal(v1['schema-id'], 0)
  t.ok(v1['timestamp-ms'] >= before, 'the server stamps the version')
  t.same(v1.summary, { 'engine-name': 'spark', 'engine-version': '3.5.1' })
  t.same(v1.representations, [sql('select id, name from db.t')])
  t.same(metadata['version-log'], [{ 'timestamp-ms': v1['timestamp-ms'], 'version-id': 1 }])

  const loaded = await call(c, 'GET', '/v1/namespaces/db/views/v')
  t.equal(loaded.status, 200)
  t.same(loaded.json, { 'metadata-location': location, metadata, config: {} })
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/views/v')).status, 204)
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/views/nope')).status, 404)

  // A location and a default catalog are kept; a space in the name travels as + or %20.
  const placed = await createView(t, c, 'my view', { location: 'file:///elsewhere/views/mine/', 'view-version': viewVersion({ 'default-catalog': 'prod' }) })
  t.equal(placed.json.metadata.location, 'file:///elsewhere/views/mine')
  t.equal(placed.json.metadata.versions[0]['default-catalog'], 'prod')
  t.equal((await call(c, 'GET', '/v1/namespaces/db/views/my+view')).status, 200)
  t.equal((await call(c, 'GET', '/v1/namespaces/db/views/my%20view')).status, 200)
  await createView(t, c, 'a')

  const all = await call(c, 'GET', '/v1/namespaces/db/views')
  t.same(all.json, { identifiers: ['a', 'my view', 'v'].map(name => ({ namespace: ['db'], name })), 'next-page-token': null })
  const names: string[] = []
  let token = ''
  for (let pages = 0; pages < 5; pages++) {
    const page = await call(c, 'GET', `/v1/namespaces/db/views?pageSize=2&pageToken=${encodeURIComponent(token)}`)
    names.push(...page.json.identifiers.map((i: { name: string }) => i.name))
    if (page.json['next-page-token'] === null) break
    token = page.json['next-page-token']
  }
  t.same(names, ['a', 'my view', 'v'], 'paging walks every view once')
  isError(t, await call(c, 'GET', '/v1/namespaces/db/views?pageSize=0'), 400, 'BadRequestException', 'pageSize')
  t.same((await call(c, 'GET', '/v1/namespaces/db/tables')).json.identifiers, [], 'views are not listed as tables')
})

t.test('every view route answers with and without the prefix', async t => {
  const c = await start(t, { prefix: 'dev' })
  t.equal((await call(c, 'POST', '/v1/dev/namespaces', { namespace: ['db'] })).status, 200)
  t.equal((await call(c, 'POST', '/v1/dev/namespaces/db/views', createBody('v'))).status, 200)
  t.equal((await call(c, 'GET', '/v1/namespaces/db/views/v')).status, 200)
  t.equal((await call(c, 'GET', '/v1/dev/namespaces/db/views/v')).status, 200)
  t.equal((await call(c, 'GET', '/v1/dev/namespaces/db/views')).json.identifiers.length, 1)
  t.equal((await call(c, 'POST', '/v1/dev/views/rename', { source: { namespace: ['db'], name: 'v' }, destination: { namespace: ['db'], name: 'w' } })).status, 204)
  t.equal((await call(c, 'DELETE', '/v1/dev/namespaces/db/views/w')).status, 204)
  isError(t, await call(c, 'GET', '/v1/other/namespaces/db/views'), 404, 'NotFoundException')
})

t.test('replace (ALTER VIEW ... AS): new schema and version, -1 resolved, equal versions reuse their id', async t => {
  const c = await setup(t)
  const created = (await createView(t, c, 'v')).json
  const uuid = created.metadata['view-uuid']
  const newFields = [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'name', required: false, type: 'string' }, { id: 3, name: 'n', required: false, type: 'int' }]
  const replaced = await call(c, 'POST', '/v1/namespaces/db/views/v', replaceBody(uuid, 'select id, name, 1 as n from db.t', newFields))
  t.equal(replaced.status, 200, replaced.text)
  const m = replaced.json.metadata
  t.not(replaced.json['metadata-location'], created['metadata-location'])
  t.match(replaced.json['metadata-location'], /\/db\/v\/metadata\/00001-/)
  t.equal(m['view-uuid'], uuid)
  t.same(m.schemas.map((s: { 'schema-id': number }) => s['schema-id']), [0, 1], 'the added schema gets the next id')
  t.equal(m['current-version-id'], 2)
  const v2 = m.versions.find((v: { 'version-id': number }) => v['version-id'] === 2)
  t.equal(v2['schema-id'], 1, 'schema-id -1 is the schema added in this commit')
  t.equal(v2['timestamp-ms'], 2000, 'an added version keeps its own timestamp')
  t.same(m['version-log'].map((e: { 'version-id': number }) => e['version-id']), [1, 2])
  t.equal(m['version-log'][1]['timestamp-ms'], 2000, 'the log entry of a version added now uses its timestamp')
  t.same((await call(c, 'GET', '/v1/namespaces/db/views/v')).json.metadata, m, 'the replacement is what loads')

  // The same version again (another id, another timestamp) is not added twice: its id is reused.
  const again = await call(c, 'POST', '/v1/namespaces/db/views/v', {
    updates: [
      { action: 'add-view-version', 'view-version': viewVersion({ 'version-id': 7, 'timestamp-ms': 9999, 'schema-id': 1, representations: [sql('select id, name, 1 as n from db.t')] }) },
      { action: 'set-current-view-version', 'view-version-id': -1 }
    ]
  })
  isError(t, again, 400, 'ValidationException', 'Cannot set last version id')

  const reuse = await call(c, 'POST', '/v1/namespaces/db/views/v', {
    updates: [{ action: 'add-view-version', 'view-version': viewVersion({ 'version-id': 7, 'timestamp-ms': 9999, 'schema-id': 1, representations: [sql('select id, name, 1 as n from db.t')] }) }]
  })
  t.equal(reuse.status, 200)
  t.equal(reuse.json['metadata-location'], replaced.json['metadata-location'], 'nothing changed: no new metadata file')
  t.equal(reuse.json.metadata.versions.length, 2)

  // A new version with a client id below the existing ones gets highest + 1; going back to 1 logs now.
  const before = Date.now()
  const third = await call(c, 'POST', '/v1/namespaces/db/views/v', {
    requirements: [{ type: 'assert-view-uuid', uuid: uuid.toUpperCase() }],
    updates: [
      { action: 'add-view-version', 'view-version': viewVersion({ 'version-id': 1, 'schema-id': 0, representations: [sql('select 3')] }) },
      { action: 'set-current-view-version', 'view-version-id': 1 },
      { action: 'set-properties', updates: { owner: 'ana' } },
      { action: 'remove-properties', removals: ['comment', 'absent'] },
      { action: 'set-location', location: 'file:///somewhere/else' }
    ]
  })
  t.equal(third.status, 200, third.text)
  const m3 = third.json.metadata
  t.same(m3.versions.map((v: { 'version-id': number }) => v['version-id']), [1, 2, 3])
  t.equal(m3['current-version-id'], 1)
  t.ok(m3['version-log'].at(-1)['timestamp-ms'] >= before, 'reactivating an old version is logged at the server\'s time')
  t.same(m3.properties, { owner: 'ana' })
  t.equal(m3.location, 'file:///somewhere/else')
  t.match(third.json['metadata-location'], /\/db\/v\/metadata\/00002-/, 'files stay in the warehouse after set-location')

  // Equal schemas are reused, never duplicated; assign-uuid with the same uuid is a no-op.
  const same = await call(c, 'POST', '/v1/namespaces/db/views/v', {
    updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 42, fields: newFields } }, { action: 'assign-uuid', uuid }, { action: 'upgrade-format-version', 'format-version': 1 }]
  })
  t.equal(same.status, 200)
  t.equal(same.json['metadata-location'], third.json['metadata-location'], 'nothing changed')
})

t.test('requirements: a wrong view uuid is 409 CommitFailedException and changes nothing', async t => {
  const c = await setup(t)
  const created = (await createView(t, c, 'v')).json
  const wrong = await call(c, 'POST', '/v1/namespaces/db/views/v', replaceBody('00000000-0000-0000-0000-000000000000', 'select 2'))
  isError(t, wrong, 409, 'CommitFailedException', /view UUID does not match/)
  t.same((await call(c, 'GET', '/v1/namespaces/db/views/v')).json['metadata-location'], created['metadata-location'])
  isError(t, await call(c, 'POST', '/v1/namespaces/db/views/v', { requirements: [{ type: 'assert-table-uuid', uuid: 'x' }], updates: [] }),
    400, 'BadRequestException', 'Cannot validate assert-table-uuid against a view')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/views/v', { requirements: [{ type: 'assert-view-uuid' }], updates: [] }),
    400, 'BadRequestException', 'uuid is missing')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/views/v', { requirements: [{ type: 'assert-anything' }] }),
    400, 'BadRequestException', 'unknown requirement type: assert-anything')
})

t.test('bad bodies are 400 with a message naming what was wrong', async t => {
  const c = await setup(t)
  const create = async (body: unknown) => await call(c, 'POST', '/v1/namespaces/db/views', body)
  isError(t, await create('[]'), 400, 'BadRequestException', 'body must be an object')
  isError(t, await create('{"name":'), 400, 'BadRequestException', 'Malformed request')
  isError(t, await create({ ...createBody('v'), name: undefined }), 400, 'BadRequestException', 'Invalid view name')
  isError(t, await create({ ...createBody('v'), name: '../x' }), 400, 'BadRequestException', 'Invalid view name')
  isError(t, await create({ ...createBody('v'), schema: undefined }), 400, 'BadRequestException', 'schema is required')
  isError(t, await create({ ...createBody('v'), 'view-version': undefined }), 400, 'BadRequestException', 'view-version is required')
  isError(t, await create({ ...createBody('v'), schema: { type: 'struct', fields: [{ id: 1, name: 'a', required: false, type: 'nope' }] } }), 400, 'BadRequestException', 'unknown type')
  isError(t, await create({ ...createBody('v'), properties: { a: 1 } }), 400, 'BadRequestException', 'view properties')
  isError(t, await create({ ...createBody('v'), location: '' }), 400, 'BadRequestException', 'location')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ summary: undefined }) })), 400, 'BadRequestException', 'view-version.summary')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ 'default-namespace': 'db' }) })), 400, 'BadRequestException', 'view-version.default-namespace')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ 'timestamp-ms': 'now' }) })), 400, 'BadRequestException', 'view-version.timestamp-ms')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ representations: [] }) })), 400, 'BadRequestException', 'without specifying a query')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ representations: [{ type: 'substrait', plan: 'x' }] }) })), 400, 'BadRequestException', 'unsupported view representation type')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ representations: [{ type: 'sql', dialect: 'spark' }] }) })), 400, 'BadRequestException', 'representations[0].sql')
  isError(t, await create(createBody('v', { 'view-version': viewVersion({ representations: [sql('select 1', 'Spark'), sql('select 2', 'spark')] }) })), 400, 'IllegalArgumentException', 'multiple queries for dialect spark')
  t.same((await call(c, 'GET', '/v1/namespaces/db/views')).json.identifiers, [], 'no bad create left a view behind')

  await createView(t, c, 'v', { 'view-version': viewVersion({ representations: [sql('select 1'), sql('select 1', 'trino')] }) })
  const commit = async (body: unknown) => await call(c, 'POST', '/v1/namespaces/db/views/v', body)
  isError(t, await commit('"x"'), 400, 'BadRequestException', 'body must be an object')
  isError(t, await commit({ updates: {} }), 400, 'BadRequestException', 'updates must be an array')
  isError(t, await commit({ updates: [{ action: 'do-something' }] }), 400, 'BadRequestException', 'unknown update action: do-something')
  isError(t, await commit({ updates: [{ action: 'add-spec', spec: { fields: [] } }] }), 400, 'BadRequestException', 'Cannot apply update add-spec to a view')
  isError(t, await commit({ updates: [{ action: 'add-view-version' }] }), 400, 'BadRequestException', 'view-version is missing')
  isError(t, await commit({ updates: [{ action: 'add-view-version', 'view-version': 1 }] }), 400, 'BadRequestException', 'view-version must be an object')
  isError(t, await commit({ updates: [{ action: 'set-current-view-version', 'view-version-id': 'x' }] }), 400, 'BadRequestException', 'view-version-id must be an integer')
  isError(t, await commit({ updates: [{ action: 'set-current-view-version', 'view-version-id': 5 }] }), 400, 'IllegalArgumentException', 'unknown version: 5')
  isError(t, await commit({ updates: [{ action: 'add-view-version', 'view-version': viewVersion({ 'schema-id': 8 }) }] }), 400, 'IllegalArgumentException', 'unknown schema: 8')
  isError(t, await commit({ updates: [{ action: 'add-view-version', 'view-version': viewVersion({ 'schema-id': -1 }) }] }), 400, 'ValidationException', 'no schema has been added')
  isError(t, await commit({ updates: [{ action: 'assign-uuid', uuid: 'another' }] }), 400, 'IllegalArgumentException', 'Cannot reassign uuid')
  isError(t, await commit({ updates: [{ action: 'upgrade-format-version', 'format-version': 2 }] }), 400, 'IllegalArgumentException', 'Unsupported format version: 2')
  isError(t, await commit({ updates: [{ action: 'upgrade-format-version', 'format-version': 0 }] }), 400, 'IllegalArgumentException', 'Cannot downgrade v1 view to v0')
  isError(t, await commit({ updates: [{ action: 'set-properties', updates: { 'version.history.num-entries': '0' } }] }), 400, 'BadRequestException', 'must be positive')
  // Java refuses a replace that loses a dialect unless replace.drop-dialect.allowed is true.
  const dropTrino = { updates: [{ action: 'add-view-version', 'view-version': viewVersion({ 'schema-id': 0, representations: [sql('select 2')] }) }, { action: 'set-current-view-version', 'view-version-id': -1 }] }
  isError(t, await commit(dropTrino), 400, 'BadRequestException', 'loss of view dialects')
  t.equal((await commit({ updates: [{ action: 'set-properties', updates: { 'replace.drop-dialect.allowed': 'true' } }, ...dropTrino.updates] })).status, 200)
  isError(t, await call(c, 'POST', '/v1/namespaces/db/views/v', { updates: [{ action: 'add-view-version', 'view-version': {} }] }), 400, 'BadRequestException', 'version-id must be an integer')
})

t.test('unknown namespaces and views are 404 with their own types', async t => {
  const c = await setup(t)
  isError(t, await call(c, 'GET', '/v1/namespaces/nope/views'), 404, 'NoSuchNamespaceException')
  isError(t, await call(c, 'POST', '/v1/namespaces/nope/views', createBody('v')), 404, 'NoSuchNamespaceException')
  isError(t, await call(c, 'GET', '/v1/namespaces/db/views/v'), 404, 'NoSuchViewException', 'View does not exist: db.v')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/views/v', { updates: [] }), 404, 'NoSuchViewException')
  isError(t, await call(c, 'DELETE', '/v1/namespaces/db/views/v'), 404, 'NoSuchViewException')
  isError(t, await call(c, 'POST', '/v1/views/rename', { source: { namespace: ['db'], name: 'v' }, destination: { namespace: ['db'], name: 'w' } }), 404, 'NoSuchViewException')
})

t.test('a table and a view never share a name', async t => {
  const c = await setup(t)
  const ice = new IcebergRestCatalog({ baseUrl: c.url })
  await ice.createTable({ namespace: ['db'] }, { name: 't', schema: { type: 'struct', fields: [{ id: 1, name: 'id', type: 'long', required: true }], 'schema-id': 0 } })
  await createView(t, c, 'v')

  isError(t, await call(c, 'POST', '/v1/namespaces/db/views', createBody('t')), 409, 'AlreadyExistsException', 'Table with same name already exists: db.t')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/views', createBody('v')), 409, 'AlreadyExistsException', 'View already exists: db.v')
  await t.rejects(ice.createTable({ namespace: ['db'] }, { name: 'v', schema: { type: 'struct', fields: [], 'schema-id': 0 } }), 'iceberg-js cannot create a table over a view')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'v', schema: { type: 'struct', fields: [] } }), 409, 'AlreadyExistsException', 'View with same name already exists: db.v')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'v', schema: { type: 'struct', fields: [] }, 'stage-create': true }), 409, 'AlreadyExistsException')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/tables/v', {
    requirements: [{ type: 'assert-create' }],
    updates: [{ action: 'add-schema', schema: { type: 'struct', fields: [] } }, { action: 'set-current-schema', 'schema-id': -1 }]
  }), 409, 'AlreadyExistsException', 'View with same name already exists')

  isError(t, await call(c, 'GET', '/v1/namespaces/db/tables/v'), 404, 'NoSuchTableException')
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/tables/v')).status, 404)
  isError(t, await call(c, 'DELETE', '/v1/namespaces/db/tables/v'), 404, 'NoSuchTableException')
  isError(t, await call(c, 'POST', '/v1/namespaces/db/tables/v', { requirements: [], updates: [] }), 404, 'NoSuchTableException')
  isError(t, await call(c, 'GET', '/v1/namespaces/db/views/t'), 404, 'NoSuchViewException')
  isError(t, await call(c, 'DELETE', '/v1/namespaces/db/views/t'), 404, 'NoSuchViewException')

  isError(t, await call(c, 'POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 't' }, destination: { namespace: ['db'], name: 'v' } }), 409, 'AlreadyExistsException', 'view already exists')
  isError(t, await call(c, 'POST', '/v1/views/rename', { source: { namespace: ['db'], name: 'v' }, destination: { namespace: ['db'], name: 't' } }), 409, 'AlreadyExistsException', 'table already exists')
  t.same((await call(c, 'GET', '/v1/namespaces/db/tables')).json.identifiers, [{ namespace: ['db'], name: 't' }])
  t.same((await call(c, 'GET', '/v1/namespaces/db/views')).json.identifiers, [{ namespace: ['db'], name: 'v' }])

  // A namespace holding a view is not empty.
  t.equal((await call(c, 'DELETE', '/v1/namespaces/db/tables/t')).status, 204)
  isError(t, await call(c, 'DELETE', '/v1/namespaces/db'), 409, 'NamespaceNotEmptyException', '1 view(s)')
  t.equal((await call(c, 'DELETE', '/v1/namespaces/db/views/v')).status, 204)
  t.equal((await call(c, 'DELETE', '/v1/namespaces/db')).status, 204)
})

t.test('rename moves a view across namespaces; drop releases the name', async t => {
  const c = await setup(t)
  t.equal((await call(c, 'POST', '/v1/namespaces', { namespace: ['other'] })).status, 200)
  const created = (await createView(t, c, 'v')).json
  await createView(t, c, 'w')
  const rename = async (from: string[], to: string[]) => await call(c, 'POST', '/v1/views/rename', {
    source: { namespace: from.slice(0, -1), name: from.at(-1) },
    destination: { namespace: to.slice(0, -1), name: to.at(-1) }
  })
  isError(t, await rename(['db', 'v'], ['db', 'w']), 409, 'AlreadyExistsException', 'view already exists')
  isError(t, await rename(['db', 'v'], ['gone', 'v']), 404, 'NoSuchNamespaceException')
  isError(t, await call(c, 'POST', '/v1/views/rename', { source: { namespace: ['db'], name: 'v' } }), 400, 'BadRequestException', 'destination')
  t.equal((await rename(['db', 'v'], ['other', 'moved'])).status, 204)
  isError(t, await call(c, 'GET', '/v1/namespaces/db/views/v'), 404, 'NoSuchViewException')
  const moved = await call(c, 'GET', '/v1/namespaces/other/views/moved')
  t.same(moved.json, created, 'the same metadata file, as in Java')
  // The renamed view commits under its new name.
  const replaced = await call(c, 'POST', '/v1/namespaces/other/views/moved', replaceBody(created.metadata['view-uuid'], 'select 2'))
  t.equal(replaced.status, 200, replaced.text)
  t.equal(replaced.json.metadata['current-version-id'], 2)

  t.equal((await call(c, 'DELETE', '/v1/namespaces/other/views/moved')).status, 204)
  isError(t, await call(c, 'DELETE', '/v1/namespaces/other/views/moved'), 404, 'NoSuchViewException')
  t.equal((await call(c, 'POST', '/v1/namespaces/other/tables', { name: 'moved', schema: { type: 'struct', fields: [] } })).status, 200, 'a dropped view\'s name can hold a table')
})

t.test('version.history.num-entries keeps the newest versions and the history that still names them', async t => {
  const c = await setup(t)
  const created = (await createView(t, c, 'v', { properties: { 'version.history.num-entries': '2' } })).json
  const uuid = created.metadata['view-uuid']
  let last: Res | undefined
  for (const q of ['select 2', 'select 3', 'select 4']) {
    last = await call(c, 'POST', '/v1/namespaces/db/views/v', replaceBody(uuid, q))
    t.equal(last.status, 200, last.text)
  }
  const m = last!.json.metadata
  t.same(m.versions.map((v: { 'version-id': number }) => v['version-id']), [4, 3], 'the current version first, then the newest')
  t.same(m['version-log'].map((e: { 'version-id': number }) => e['version-id']), [3, 4])
})

t.test('views persist in the warehouse and register-view adopts a view metadata file', async t => {
  const warehouse = await mkdtemp(path.join(os.tmpdir(), 'iceguard-views-'))
  t.teardown(() => rm(warehouse, { recursive: true, force: true }))
  const first = await startEmbeddedCatalog({ warehouse })
  t.equal((await call(first, 'POST', '/v1/namespaces', { namespace: ['db'] })).status, 200)
  const created = (await createView(t, first, 'v')).json
  const replaced = (await call(first, 'POST', '/v1/namespaces/db/views/v', replaceBody(created.metadata['view-uuid'], 'select 2'))).json
  await createView(t, first, 'keep')
  await first.close()
  const state = JSON.parse(await readFile(path.join(warehouse, '.iceguard-catalog.json'), 'utf8'))
  t.same(state.views.map((v: { name: string }) => v.name).sort(), ['keep', 'v'])

  const second = await start(t, { warehouse, memory: false })
  const loaded = await call(second, 'GET', '/v1/namespaces/db/views/v')
  t.same(loaded.json.metadata, replaced.metadata, 'the view survives a restart')
  t.equal(loaded.json['metadata-location'], replaced['metadata-location'])
  const file = JSON.parse(await readFile(new URL(replaced['metadata-location']), 'utf8'))
  t.same(file, replaced.metadata, 'the metadata file holds the view metadata')

  // Drop the view, then register its file again (a relative path names a file in the warehouse).
  t.equal((await call(second, 'DELETE', '/v1/namespaces/db/views/v')).status, 204)
  const relative = path.relative(warehouse, new URL(replaced['metadata-location']).pathname)
  const registered = await call(second, 'POST', '/v1/namespaces/db/register-view', { name: 'again', 'metadata-location': relative })
  t.equal(registered.status, 200, registered.text)
  t.same(registered.json.metadata, replaced.metadata)
  t.equal((await call(second, 'GET', '/v1/namespaces/db/views/again')).status, 200)
  isError(t, await call(second, 'POST', '/v1/namespaces/db/register-view', { name: 'keep', 'metadata-location': relative }), 409, 'AlreadyExistsException')
  isError(t, await call(second, 'POST', '/v1/namespaces/db/register-view', { name: 'x' }), 400, 'BadRequestException', 'metadata-location is required')
  isError(t, await call(second, 'POST', '/v1/namespaces/db/register', { name: 'tbl', 'metadata-location': relative }), 400, 'BadRequestException', 'register-view')
  const table = await call(second, 'POST', '/v1/namespaces/db/tables', { name: 't', schema: { type: 'struct', fields: [] } })
  isError(t, await call(second, 'POST', '/v1/namespaces/db/register-view', { name: 'y', 'metadata-location': table.json['metadata-location'] }), 400, 'BadRequestException', 'no view-uuid')
})

t.test('in memory, a view keeps only its current metadata file', async t => {
  const c = await setup(t)
  const created = (await createView(t, c, 'v')).json
  const uuid = created.metadata['view-uuid']
  const locations: string[] = [created['metadata-location']]
  for (const q of ['select 2', 'select 3']) {
    const res = await call(c, 'POST', '/v1/namespaces/db/views/v', replaceBody(uuid, q))
    t.equal(res.status, 200, res.text)
    locations.push(res.json['metadata-location'])
  }
  t.equal(new Set(locations).size, 3, 'each replace wrote a new file')
  // register-view reads a file by location: the current one is there, the earlier ones were freed.
  const current = await call(c, 'POST', '/v1/namespaces/db/register-view', { name: 'current', 'metadata-location': locations[2] })
  t.equal(current.status, 200, current.text)
  for (const old of locations.slice(0, 2)) {
    isError(t, await call(c, 'POST', '/v1/namespaces/db/register-view', { name: 'old', 'metadata-location': old }), 404, 'NotFoundException')
  }
  t.equal((await call(c, 'GET', '/v1/namespaces/db/views/v')).json['metadata-location'], locations[2], 'the view still loads')
})
