/**
 * The embedded development catalog on its own, over HTTP on 127.0.0.1:0: config, namespaces,
 * tables, path decoding, paging, ETags, errors, request recording.
 * Commits, transactions, concurrency and persistence are in catalog-commits.test.ts; views in
 * catalog-views.test.ts.
 */
import t, { type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import { request } from 'undici'
import { startEmbeddedCatalog, type EmbeddedCatalog, type EmbeddedCatalogOptions } from '../../src/dev-catalog/index.js'

interface Res { status: number, headers: Record<string, string | string[] | undefined>, text: string, json: any }

async function start (t: Test, opts: EmbeddedCatalogOptions = {}): Promise<EmbeddedCatalog> {
  const catalog = await startEmbeddedCatalog({ memory: true, ...opts })
  t.teardown(() => catalog.close())
  return catalog
}

async function call (c: EmbeddedCatalog, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const res = await request(c.url + path, {
    method: method as 'GET',
    body: payload,
    headers: { 'content-type': 'application/json', ...headers }
  })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) }
}

/** Sends the path exactly as written (undici would resolve `..` and `%2E%2E` before sending). */
async function rawCall (c: EmbeddedCatalog, method: string, path: string): Promise<Res> {
  const url = new URL(c.url)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path }, res => {
      const chunks: Buffer[] = []
      res.on('data', (d: Buffer) => chunks.push(d))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

const schema = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' }
  ]
}

async function createNs (t: Test, c: EmbeddedCatalog, ...levels: string[]): Promise<void> {
  const res = await call(c, 'POST', '/v1/namespaces', { namespace: levels })
  t.equal(res.status, 200, `namespace ${levels.join('.')} created`)
}

async function createTable (t: Test, c: EmbeddedCatalog, nsPath: string, name: string, extra: object = {}): Promise<Res> {
  const res = await call(c, 'POST', `/v1/namespaces/${nsPath}/tables`, { name, schema, ...extra })
  t.equal(res.status, 200, `table ${name} created`)
  return res
}

function isErrorModel (t: Test, res: Res, status: number, type: string): void {
  t.equal(res.status, status, `status ${status}`)
  t.match(res.headers['content-type'], /application\/json/)
  t.same(Object.keys(res.json), ['error'])
  t.equal(res.json.error.code, status, 'code equals the status')
  t.equal(res.json.error.type, type)
  t.type(res.json.error.message, 'string')
}

t.test('GET /v1/config advertises endpoints, and the prefix when one is set', async t => {
  const plain = await start(t)
  const res = await call(plain, 'GET', '/v1/config')
  t.equal(res.status, 200)
  t.same(res.json.defaults, {})
  t.same(res.json.overrides, {})
  t.ok(res.json.endpoints.includes('POST /v1/{prefix}/namespaces/{namespace}/tables/{table}'))
  t.ok(res.json.endpoints.includes('POST /v1/{prefix}/transactions/commit'))
  t.ok(res.json.endpoints.includes('HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}'))
  t.ok(res.json.endpoints.includes('POST /v1/{prefix}/namespaces/{namespace}/views/{view}'), 'views are advertised (catalog-views.test.ts)')
  t.notOk(res.json.endpoints.some((e: string) => e.endsWith('/plan') || e.endsWith('/sign')), 'scan planning and signing are not')

  const prefixed = await start(t, { prefix: 'dev' })
  const cfg = await call(prefixed, 'GET', '/v1/config')
  t.same(cfg.json.overrides, { prefix: 'dev' })
  // Every route answers with and without the prefix segment.
  t.equal((await call(prefixed, 'POST', '/v1/dev/namespaces', { namespace: ['p'] })).status, 200)
  t.equal((await call(prefixed, 'GET', '/v1/namespaces/p')).status, 200)
  t.equal((await call(prefixed, 'GET', '/v1/dev/namespaces/p')).status, 200)
  isErrorModel(t, await call(prefixed, 'GET', '/v1/other/namespaces/p'), 404, 'NotFoundException')
  // Without a configured prefix any prefix segment is accepted.
  await createNs(t, plain, 'q')
  t.equal((await call(plain, 'GET', '/v1/anything/namespaces/q')).status, 200)
})

t.test('basePath serves under a sub-path only', async t => {
  const c = await start(t, { basePath: '/catalog' })
  t.match(c.url, /^http:\/\/127\.0\.0\.1:\d+\/catalog$/)
  t.equal((await call(c, 'GET', '/v1/config')).status, 200)
  const outside = await request(c.url.replace('/catalog', '') + '/v1/config')
  t.equal(outside.statusCode, 404)
  await outside.body.text()
})

t.test('namespaces: create, nested, list with parent and paging, load, exists, properties, drop', async t => {
  const c = await start(t)
  await createNs(t, c, 'a')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', { namespace: ['a'] }), 409, 'AlreadyExistsException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', { namespace: ['x', 'y'] }), 404, 'NoSuchNamespaceException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', { namespace: [] }), 400, 'BadRequestException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', { namespace: ['ok'], properties: { k: 1 } }), 400, 'BadRequestException')
  for (const child of ['c3', 'c1', 'c2', 'c4', 'c5']) await createNs(t, c, 'a', child)
  await createNs(t, c, 'a', 'c1', 'deep')
  await createNs(t, c, 'b')

  t.same((await call(c, 'GET', '/v1/namespaces')).json, { namespaces: [['a'], ['b']], 'next-page-token': null })
  const children = await call(c, 'GET', '/v1/namespaces?parent=a')
  t.same(children.json.namespaces, [['a', 'c1'], ['a', 'c2'], ['a', 'c3'], ['a', 'c4'], ['a', 'c5']], 'direct children only, sorted')
  t.same((await call(c, 'GET', '/v1/namespaces?parent=a%1Fc1')).json.namespaces, [['a', 'c1', 'deep']])
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces?parent=nope'), 404, 'NoSuchNamespaceException')

  const seen: string[][] = []
  let token = ''
  let pages = 0
  do {
    const page = await call(c, 'GET', `/v1/namespaces?parent=a&pageSize=2&pageToken=${encodeURIComponent(token)}`)
    t.equal(page.status, 200)
    t.ok(page.json.namespaces.length <= 2)
    seen.push(...page.json.namespaces)
    token = page.json['next-page-token'] ?? ''
    pages++
  } while (token !== '' && pages < 10)
  t.equal(pages, 3, 'five children in pages of two')
  t.same(seen.map(n => n[1]), ['c1', 'c2', 'c3', 'c4', 'c5'], 'every child exactly once')
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces?pageSize=0'), 400, 'BadRequestException')
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces?pageToken=garbage!&pageSize=1'), 400, 'BadRequestException')

  const props = await call(c, 'POST', '/v1/namespaces/a/properties', { updates: { owner: 'me', team: 'data' } })
  t.same(props.json, { updated: ['owner', 'team'], removed: [], missing: [] })
  const props2 = await call(c, 'POST', '/v1/namespaces/a/properties', { removals: ['team', 'ghost'], updates: { owner: 'you' } })
  t.same(props2.json, { updated: ['owner'], removed: ['team'], missing: ['ghost'] })
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/a/properties', { removals: ['k'], updates: { k: 'v' } }), 422, 'UnprocessableEntityException')
  t.same((await call(c, 'GET', '/v1/namespaces/a')).json, { namespace: ['a'], properties: { owner: 'you' } })

  const head = await call(c, 'HEAD', '/v1/namespaces/a%1Fc1')
  t.equal(head.status, 204)
  t.equal(head.text, '')
  t.equal((await call(c, 'HEAD', '/v1/namespaces/zzz')).status, 404)

  isErrorModel(t, await call(c, 'DELETE', '/v1/namespaces/a'), 409, 'NamespaceNotEmptyException')
  await createTable(t, c, 'b', 't')
  isErrorModel(t, await call(c, 'DELETE', '/v1/namespaces/b'), 409, 'NamespaceNotEmptyException')
  t.equal((await call(c, 'DELETE', '/v1/namespaces/b/tables/t')).status, 204)
  t.equal((await call(c, 'DELETE', '/v1/namespaces/b')).status, 204)
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces/b'), 404, 'NoSuchNamespaceException')
})

t.test('namespace properties keep a __proto__ key as data', async t => {
  const c = await start(t)
  const res = await call(c, 'POST', '/v1/namespaces', '{"namespace":["p"],"properties":{"__proto__":"x","polluted":"no"}}')
  t.equal(res.status, 200)
  const loaded = await call(c, 'GET', '/v1/namespaces/p')
  t.equal(loaded.text.includes('"__proto__":"x"'), true, 'stored as an ordinary key')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
})

t.test('path segments decode like the Java server: + and %20 are both a space; %1F splits namespaces', async t => {
  const c = await start(t)
  await createNs(t, c, 'my ns')
  await createNs(t, c, 'my ns', 'in ner')
  // Java client spelling (+), iceberg-js spelling (%20): the same table.
  await createTable(t, c, 'my+ns%1Fin+ner', 'b c')
  const viaPlus = await call(c, 'GET', '/v1/namespaces/my+ns%1Fin+ner/tables/b+c')
  const viaPct = await call(c, 'GET', '/v1/namespaces/my%20ns%1fin%20ner/tables/b%20c')
  t.equal(viaPlus.status, 200)
  t.equal(viaPct.status, 200)
  t.equal(viaPlus.json['metadata-location'], viaPct.json['metadata-location'])
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/my%20ns%1Fin%20ner/tables', { name: 'b c', schema }), 409, 'AlreadyExistsException')
  const list = await call(c, 'GET', '/v1/namespaces/my+ns%1Fin+ner/tables')
  t.same(list.json.identifiers, [{ namespace: ['my ns', 'in ner'], name: 'b c' }])
  // A literal plus is %2B.
  await createTable(t, c, 'my+ns', 'x+y')
  t.equal((await call(c, 'HEAD', '/v1/namespaces/my+ns/tables/x%2By')).status, 204)
  t.equal((await call(c, 'HEAD', '/v1/namespaces/my+ns/tables/x+y')).status, 404)
})

t.test('names that could leave the warehouse folder are rejected with 400', async t => {
  const c = await start(t)
  await createNs(t, c, 'safe')
  const bad = ['..', '../x', 'a/b', 'a\\b', '.hidden', 'nul\u0000byte']
  for (const name of bad) {
    isErrorModel(t, await call(c, 'POST', '/v1/namespaces/safe/tables', { name, schema }), 400, 'BadRequestException')
    isErrorModel(t, await call(c, 'POST', '/v1/namespaces', { namespace: [name] }), 400, 'BadRequestException')
  }
  // Encoded in the path, too.
  for (const seg of ['..', '%2E%2E', 'a%2Fb', '%00', '.x']) {
    isErrorModel(t, await rawCall(c, 'GET', `/v1/namespaces/safe/tables/${seg}`), 400, 'BadRequestException')
    isErrorModel(t, await call(c, 'POST', `/v1/namespaces/safe%1F${seg}/tables`, { name: 't', schema }), 400, 'BadRequestException')
  }
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces/safe/tables/%E0%A4%A'), 400, 'BadRequestException')
})

t.test('tables: create shape, list with paging, load, exists, drop, rename', async t => {
  const c = await start(t)
  await createNs(t, c, 'db')
  await createNs(t, c, 'other')
  const created = await createTable(t, c, 'db', 't1', { properties: { owner: 'me' } })
  const md = created.json.metadata
  t.match(created.json['metadata-location'], /\/db\/t1\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/)
  t.equal(md['format-version'], 2)
  t.match(md['table-uuid'], /^[0-9a-f-]{36}$/)
  t.same(md.properties, { 'write.parquet.compression-codec': 'zstd', owner: 'me' }, 'the properties asked for, and the Parquet codec Java writes into every new table')
  t.equal(md['current-schema-id'], 0)
  t.equal(md['last-column-id'], 2)
  t.same(md['partition-specs'], [{ 'spec-id': 0, fields: [] }])
  t.equal(md['last-partition-id'], 999)
  t.same(md['sort-orders'], [{ 'order-id': 0, fields: [] }])
  t.equal(md['current-snapshot-id'], -1)
  t.same(md.refs, {})
  t.same(md['metadata-log'], [])
  t.ok(created.headers.etag, 'create returns an ETag')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 't1', schema }), 409, 'AlreadyExistsException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/nope/tables', { name: 't1', schema }), 404, 'NoSuchNamespaceException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'bad' }), 400, 'BadRequestException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'bad', schema: { type: 'struct', fields: [{ id: 1, name: 'x', required: true, type: 'lnog' }] } }), 400, 'BadRequestException')

  for (const name of ['t3', 't2', 't4']) await createTable(t, c, 'db', name)
  const all = await call(c, 'GET', '/v1/namespaces/db/tables')
  t.same(all.json.identifiers.map((i: any) => i.name), ['t1', 't2', 't3', 't4'])
  const p1 = await call(c, 'GET', '/v1/namespaces/db/tables?pageSize=3')
  t.same(p1.json.identifiers.map((i: any) => i.name), ['t1', 't2', 't3'])
  t.type(p1.json['next-page-token'], 'string')
  const p2 = await call(c, 'GET', `/v1/namespaces/db/tables?pageSize=3&pageToken=${p1.json['next-page-token'] as string}`)
  t.same(p2.json.identifiers.map((i: any) => i.name), ['t4'])
  t.equal(p2.json['next-page-token'], null)
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces/nope/tables'), 404, 'NoSuchNamespaceException')

  const load1 = await call(c, 'GET', '/v1/namespaces/db/tables/t1')
  const load2 = await call(c, 'GET', '/v1/namespaces/db/tables/t1?snapshots=all')
  t.equal(load1.json['metadata-location'], created.json['metadata-location'], 'unchanged table: same metadata-location')
  t.equal(load2.json['metadata-location'], created.json['metadata-location'])
  t.same(load1.json.config, {})
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces/db/tables/t1?snapshots=some'), 400, 'BadRequestException')
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces/db/tables/zz'), 404, 'NoSuchTableException')
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/tables/t1')).status, 204)
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/tables/zz')).status, 404)

  t.equal((await call(c, 'POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 't1' }, destination: { namespace: ['other'], name: 'moved' } })).status, 204)
  t.equal((await call(c, 'HEAD', '/v1/namespaces/db/tables/t1')).status, 404)
  const moved = await call(c, 'GET', '/v1/namespaces/other/tables/moved')
  t.equal(moved.json['metadata-location'], created.json['metadata-location'], 'rename keeps the metadata')
  isErrorModel(t, await call(c, 'POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 't1' }, destination: { namespace: ['db'], name: 'x' } }), 404, 'NoSuchTableException')
  isErrorModel(t, await call(c, 'POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 't2' }, destination: { namespace: ['db'], name: 't3' } }), 409, 'AlreadyExistsException')
  isErrorModel(t, await call(c, 'POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 't2' }, destination: { namespace: ['nope'], name: 't3' } }), 404, 'NoSuchNamespaceException')

  t.equal((await call(c, 'DELETE', '/v1/namespaces/db/tables/t2')).status, 204)
  isErrorModel(t, await call(c, 'DELETE', '/v1/namespaces/db/tables/t2'), 404, 'NoSuchTableException')
})

t.test('createTable assigns fresh ids like Java and rebinds partition and sort sources', async t => {
  const c = await start(t)
  await createNs(t, c, 'db')
  const nested = {
    type: 'struct',
    'identifier-field-ids': [10],
    fields: [
      { id: 10, name: 'id', required: true, type: 'long' },
      { id: 20, name: 'loc', required: false, type: { type: 'struct', fields: [{ id: 21, name: 'lat', required: false, type: 'double' }] } },
      { id: 30, name: 'tags', required: false, type: { type: 'list', 'element-id': 31, element: 'string', 'element-required': false } },
      { id: 40, name: 'attrs', required: false, type: { type: 'map', 'key-id': 41, key: 'string', 'value-id': 42, value: 'decimal(10,2)', 'value-required': true } },
      { id: 50, name: 'ts', required: false, type: 'TIMESTAMPTZ' }
    ]
  }
  const res = await call(c, 'POST', '/v1/namespaces/db/tables', {
    name: 'n',
    schema: nested,
    'partition-spec': { 'spec-id': 7, fields: [{ 'source-id': 50, 'field-id': 5, name: 'ts_day', transform: 'day' }, { 'source-id': 10, name: 'id_b', transform: 'bucket[8]' }] },
    'write-order': { 'order-id': 3, fields: [{ 'source-id': 21, transform: 'identity', direction: 'desc', 'null-order': 'nulls-last' }] }
  })
  t.equal(res.status, 200)
  const md = res.json.metadata
  const s = md.schemas[0]
  // A struct's own fields are numbered first, then its children (Java AssignFreshIds).
  t.same(s.fields.map((f: any) => [f.name, f.id]), [['id', 1], ['loc', 2], ['tags', 3], ['attrs', 4], ['ts', 5]])
  t.equal(s.fields[1].type.fields[0].id, 6)
  t.equal(s.fields[2].type['element-id'], 7)
  t.same([s.fields[3].type['key-id'], s.fields[3].type['value-id']], [8, 9])
  t.equal(s.fields[3].type.value, 'decimal(10, 2)', 'types in Java spelling')
  t.equal(s.fields[4].type, 'timestamptz')
  t.same(s['identifier-field-ids'], [1])
  t.equal(md['last-column-id'], 9)
  t.same(md['partition-specs'], [{ 'spec-id': 0, fields: [{ name: 'ts_day', transform: 'day', 'source-id': 5, 'field-id': 1000 }, { name: 'id_b', transform: 'bucket[8]', 'source-id': 1, 'field-id': 1001 }] }])
  t.equal(md['default-spec-id'], 0)
  t.equal(md['last-partition-id'], 1001)
  t.same(md['sort-orders'], [{ 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 6, direction: 'desc', 'null-order': 'nulls-last' }] }])
  t.equal(md['default-sort-order-id'], 1)

  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'bad', schema, 'partition-spec': { fields: [{ 'source-id': 99, name: 'x', transform: 'identity' }] } }), 400, 'BadRequestException')
})

t.test('format-version property picks the v1, v2 or v3 metadata shape', async t => {
  const c = await start(t)
  await createNs(t, c, 'db')
  const v1 = (await createTable(t, c, 'db', 'v1', { properties: { 'format-version': '1' } })).json.metadata
  t.equal(v1['format-version'], 1)
  t.same(v1.schema, v1.schemas[0], 'v1 carries the current schema')
  t.same(v1['partition-spec'], [], 'v1 carries the default spec fields')
  t.notOk('last-sequence-number' in v1)
  t.notOk('format-version' in v1.properties, 'format-version is not kept as a property')
  const v2 = (await createTable(t, c, 'db', 'v2')).json.metadata
  t.equal(v2['last-sequence-number'], 0)
  t.notOk('schema' in v2)
  t.notOk('next-row-id' in v2)
  const v3 = (await createTable(t, c, 'db', 'v3', { properties: { 'format-version': '3' } })).json.metadata
  t.equal(v3['format-version'], 3)
  t.equal(v3['next-row-id'], 0)
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/db/tables', { name: 'v9', schema, properties: { 'format-version': '9' } }), 400, 'BadRequestException')
})

t.test('load with snapshots=refs, ETag per location and mode, If-None-Match gives 304', async t => {
  const c = await start(t)
  await createNs(t, c, 'db')
  await createTable(t, c, 'db', 't')
  const snap = (id: number, parent: number | null, seq: number) => ({
    action: 'add-snapshot',
    snapshot: { 'snapshot-id': id, 'parent-snapshot-id': parent, 'sequence-number': seq, 'timestamp-ms': 1700000000000 + seq, 'manifest-list': `s3://b/m-${id}.avro`, summary: { operation: 'append' } }
  })
  const commit = await call(c, 'POST', '/v1/namespaces/db/tables/t', {
    requirements: [],
    updates: [snap(1, null, 1), snap(2, 1, 2), snap(3, 2, 3), { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 3 }, { action: 'set-snapshot-ref', 'ref-name': 'v1', type: 'tag', 'snapshot-id': 1 }]
  })
  t.equal(commit.status, 200)
  t.ok(commit.headers.etag)
  const all = await call(c, 'GET', '/v1/namespaces/db/tables/t?snapshots=all')
  const refs = await call(c, 'GET', '/v1/namespaces/db/tables/t?snapshots=refs')
  t.same(all.json.metadata.snapshots.map((s: any) => s['snapshot-id']), [1, 2, 3])
  t.same(refs.json.metadata.snapshots.map((s: any) => s['snapshot-id']), [1, 3], 'only snapshots a branch or tag points at')
  t.equal(all.json['metadata-location'], refs.json['metadata-location'])
  t.not(all.headers.etag, refs.headers.etag, 'distinct ETag per snapshots mode')
  t.equal(all.headers.etag, commit.headers.etag, 'commit ETag matches the load in mode all')
  const plain = await call(c, 'GET', '/v1/namespaces/db/tables/t')
  t.equal(plain.headers.etag, all.headers.etag, 'mode all is the default')

  const notModified = await call(c, 'GET', '/v1/namespaces/db/tables/t', undefined, { 'if-none-match': all.headers.etag as string })
  t.equal(notModified.status, 304)
  t.equal(notModified.text, '')
  t.equal(notModified.headers.etag, all.headers.etag)
  const otherMode = await call(c, 'GET', '/v1/namespaces/db/tables/t?snapshots=refs', undefined, { 'if-none-match': all.headers.etag as string })
  t.equal(otherMode.status, 200, 'a tag of the other mode does not match')

  await call(c, 'POST', '/v1/namespaces/db/tables/t', { requirements: [], updates: [{ action: 'set-properties', updates: { a: 'b' } }] })
  const stale = await call(c, 'GET', '/v1/namespaces/db/tables/t', undefined, { 'if-none-match': all.headers.etag as string })
  t.equal(stale.status, 200, 'after a commit the old tag is stale')
  t.not(stale.headers.etag, all.headers.etag)
})

t.test('errors: unknown path 404, wrong method 405, malformed JSON and duplicate keys 400', async t => {
  const c = await start(t)
  await createNs(t, c, 'db')
  isErrorModel(t, await call(c, 'GET', '/v1/nothing'), 404, 'NotFoundException')
  isErrorModel(t, await call(c, 'GET', '/v2/config'), 404, 'NotFoundException')
  isErrorModel(t, await call(c, 'GET', '/v1/namespaces/db/tables/t/extra/stuff'), 404, 'NotFoundException')
  const wrong = await call(c, 'PUT', '/v1/namespaces/db')
  isErrorModel(t, wrong, 405, 'MethodNotAllowedException')
  t.equal(wrong.headers.allow, 'GET, HEAD, DELETE')
  isErrorModel(t, await call(c, 'POST', '/v1/config'), 405, 'MethodNotAllowedException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', '{"namespace": ['), 400, 'BadRequestException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', '{"namespace":["a"],"namespace":["b"]}'), 400, 'BadRequestException')
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces', '[]'), 400, 'BadRequestException')
})

t.test('oauth token, metrics and credentials endpoints answer', async t => {
  const c = await start(t)
  await createNs(t, c, 'db')
  await createTable(t, c, 'db', 't')
  const token = await call(c, 'POST', '/v1/oauth/tokens', 'grant_type=client_credentials&client_id=a&client_secret=b', { 'content-type': 'application/x-www-form-urlencoded' })
  t.equal(token.status, 200)
  t.equal(token.json.token_type, 'bearer')
  t.type(token.json.access_token, 'string')
  t.equal((await call(c, 'POST', '/v1/namespaces/db/tables/t/metrics', { 'report-type': 'scan-report' })).status, 204)
  isErrorModel(t, await call(c, 'POST', '/v1/namespaces/db/tables/zz/metrics', {}), 404, 'NoSuchTableException')
  t.same((await call(c, 'GET', '/v1/namespaces/db/tables/t/credentials')).json, { 'storage-credentials': [] })
})

t.test('record captures every request with its raw bytes', async t => {
  const c = await start(t, { record: true })
  const raw = '{"namespace":["r"],  "properties":{"n":"3055729675574597004"}}'
  await call(c, 'POST', '/v1/namespaces', raw, { 'x-client-version': 'test' })
  await call(c, 'GET', '/v1/namespaces/r?x=%1F')
  t.equal(c.requests.length, 2)
  const [first, second] = c.requests
  t.equal(first?.method, 'POST')
  t.equal(first?.url, '/v1/namespaces')
  t.ok(first?.body.equals(Buffer.from(raw)), 'body bytes exactly as sent')
  t.equal(first?.headers['x-client-version'], 'test')
  t.equal(second?.url, '/v1/namespaces/r?x=%1F', 'url as received, not decoded')
  t.equal(second?.body.length, 0)
  c.clearRequests()
  t.equal(c.requests.length, 0)
  const quiet = await start(t)
  await call(quiet, 'GET', '/v1/config')
  t.equal(quiet.requests.length, 0, 'nothing recorded unless asked')
})
