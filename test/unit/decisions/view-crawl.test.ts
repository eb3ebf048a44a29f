/**
 * The view crawl against a scripted catalog: the client-credentials exchange, the token on every
 * call, nested namespaces and pages followed, a view's current version read with its tables'
 * schemas, and what could not be read reported by path and status, never with a secret.
 */
import t from 'tap'
import { crawlViews, type CatalogCall } from '../../../src/decisions/view-crawl.js'

const SECRET = 's3cr3t-value'

function catalog (opts: { forbid?: string } = {}): { call: CatalogCall, seen: Array<{ method: string, path: string, auth?: string, body?: string }> } {
  const seen: Array<{ method: string, path: string, auth?: string, body?: string }> = []
  const json = (statusCode: number, body: unknown) => ({ statusCode, body: Buffer.from(JSON.stringify(body)) })
  const call: CatalogCall = async (method, path, headers, body) => {
    seen.push({ method, path, ...(headers.authorization !== undefined && { auth: headers.authorization }), ...(body !== undefined && { body: body.toString() }) })
    if (method === 'POST' && path === '/v1/oauth/tokens') return json(200, { access_token: 'tok-1', token_type: 'bearer' })
    if (headers.authorization !== 'Bearer tok-1') return json(401, { error: { code: 401 } })
    if (opts.forbid !== undefined && path.startsWith(opts.forbid)) return json(403, { error: { code: 403 } })
    switch (path) {
      case '/v1/config': return json(200, { defaults: {}, overrides: { prefix: 'wh' } })
      case '/v1/wh/namespaces': return json(200, { namespaces: [['a']], 'next-page-token': 'p2' })
      case '/v1/wh/namespaces?pageToken=p2': return json(200, { namespaces: [['b']] })
      case '/v1/wh/namespaces?parent=a': return json(200, { namespaces: [['a', 'x']] })
      case '/v1/wh/namespaces?parent=a%1Fx': return json(200, { namespaces: [] })
      case '/v1/wh/namespaces?parent=b': return json(200, { namespaces: [] })
      case '/v1/wh/namespaces/a/views': return json(200, { identifiers: [] })
      case '/v1/wh/namespaces/b/views': return json(200, { identifiers: [] })
      case '/v1/wh/namespaces/a%1Fx/views': return json(200, { identifiers: [{ namespace: ['a', 'x'], name: 'v' }] })
      case '/v1/wh/namespaces/a%1Fx/views/v': return json(200, {
        metadata: {
          'current-version-id': 2,
          versions: [
            { 'version-id': 1, 'default-namespace': ['b'], representations: [{ type: 'sql', sql: 'SELECT old FROM t', dialect: 'spark' }] },
            { 'version-id': 2, 'default-namespace': ['b'], representations: [{ type: 'sql', sql: 'SELECT amount FROM t', dialect: 'spark' }] }
          ]
        }
      })
      case '/v1/wh/namespaces/b/tables/t?snapshots=refs': return json(200, {
        metadata: { 'current-schema-id': 0, schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 7, name: 'amount', required: false, type: 'double' }] }] }
      })
    }
    return json(404, { error: { code: 404 } })
  }
  return { call, seen }
}

t.test('client credentials, nested namespaces, pages, the current version by field id', async t => {
  const { call, seen } = catalog()
  const result = await crawlViews(call, { client: { clientId: 'crawler', secret: SECRET } }, () => 1000)
  const exchange = seen[0]
  t.equal(exchange?.path, '/v1/oauth/tokens')
  t.match(exchange?.body, /grant_type=client_credentials/)
  t.match(exchange?.body, /client_id=crawler/)
  t.ok(seen.slice(1).every(c => c.auth === 'Bearer tok-1'), 'the token on every later call')
  t.equal(result.prefix, 'wh')
  t.same(result.views.map(v => ({ ns: v.namespace, name: v.name, tables: v.reads.tables })), [{
    ns: ['a', 'x'],
    name: 'v',
    tables: [{ table: ['b', 't'], columns: [{ name: 'amount', fieldId: 7, pathIds: [7] }], star: false }]
  }], 'the current version, resolved against its default namespace')
  t.same(result.status, { indexedAt: 1000, complete: true, errors: [] })
})

t.test('what could not be read is reported by path and status, never with a secret', async t => {
  const { call } = catalog({ forbid: '/v1/wh/namespaces/b/views' })
  const result = await crawlViews(call, { client: { clientId: 'crawler', secret: SECRET } })
  t.equal(result.status.complete, false)
  t.same(result.status.errors, ['GET /v1/wh/namespaces/b/views answered 403'])
  t.equal(result.views.length, 1, 'the rest is indexed')
  t.notOk(JSON.stringify(result).includes(SECRET), 'no secret in the result')

  const none = await crawlViews(catalog().call, {})
  t.equal(none.status.complete, false)
  t.match(none.status.errors.join('\n'), /no catalog credential configured/)
  t.match(none.status.errors.join('\n'), /GET \/v1\/config answered 401/)
})
