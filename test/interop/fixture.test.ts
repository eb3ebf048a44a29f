/**
 * iceguard in front of the real Iceberg REST fixture, over plain HTTP on every transport: a
 * namespace and a table created through iceguard exist in the catalog, a compatible schema change
 * is applied by the catalog itself, a refused one never reaches it (the table's schema read back
 * from the fixture directly is unchanged), and the catalog's own error bodies pass through as the
 * catalog wrote them.
 */
import t from 'tap'
import { startProxy } from '../helpers/proxy.js'
import { onEveryTransport } from '../helpers/transports.js'
import { startFixture, type RunningFixture } from './helpers/fixture.js'
import { needToolchain, toolchainSkip } from './helpers/toolchain.js'

const skip = toolchainSkip(['java', 'fixture'])

async function call (base: string, method: string, path: string, body?: unknown): Promise<{ status: number, text: string, json: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  let json: any
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, text, json }
}

/**
 * An error body as the fixture writes it, without the Java stack frames below its first line: two
 * requests answered alike can differ in those frames (the server's call path), not in the error.
 */
function sameError (json: any): unknown {
  const error = json?.error
  return { message: error?.message, type: error?.type, code: error?.code, first: Array.isArray(error?.stack) ? error.stack[0] : undefined }
}

const schema = (id: number, fields: Array<[number, string, string]>): unknown => ({
  type: 'struct',
  'schema-id': id,
  fields: fields.map(([fid, name, type]) => ({ id: fid, name, required: false, type }))
})

t.test('iceguard in front of the Iceberg REST fixture', { skip }, async t => {
  if (!needToolchain(t, ['java', 'fixture'])) return
  let fixture: RunningFixture
  t.before(async () => { fixture = await startFixture() })
  t.teardown(async () => { await fixture?.stop() })

  onEveryTransport(t, t => {
    t.test('creates, evolves and refuses against the real catalog', async t => {
      const proxy = await startProxy(t, { upstream: fixture.url, policy: 'builtin:spec' })
      const ns = `ns_${t.name.replace(/\W+/g, '_')}_${Math.random().toString(36).slice(2, 8)}`
      const created = await call(proxy.url, 'POST', '/v1/namespaces', { namespace: [ns] })
      t.equal(created.status, 200, `namespace created ${created.status === 200 ? '' : created.text}`)
      const table = await call(proxy.url, 'POST', `/v1/namespaces/${ns}/tables`, { name: 'orders', schema: schema(0, [[1, 'id', 'long'], [2, 'amount', 'int']]) })
      t.equal(table.status, 200, `table created ${table.status === 200 ? '' : table.text}`)

      const widen = await call(proxy.url, 'POST', `/v1/namespaces/${ns}/tables/orders`, {
        requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
        updates: [
          { action: 'add-schema', schema: schema(1, [[1, 'id', 'long'], [2, 'amount', 'long']]), 'last-column-id': 2 },
          { action: 'set-current-schema', 'schema-id': -1 }
        ]
      })
      t.equal(widen.status, 200, `int -> long is applied by the catalog ${widen.status === 200 ? '' : widen.text}`)

      const retype = await call(proxy.url, 'POST', `/v1/namespaces/${ns}/tables/orders`, {
        requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 1 }],
        updates: [
          { action: 'add-schema', schema: schema(2, [[1, 'id', 'long'], [2, 'amount', 'string']]), 'last-column-id': 2 },
          { action: 'set-current-schema', 'schema-id': -1 }
        ]
      })
      t.equal(retype.status, 400, 'long -> string is refused')
      t.match(retype.json?.error?.message, /TYPE_PROMOTION_VALID/, 'naming the rule')

      const direct = await call(fixture.url, 'GET', `/v1/namespaces/${ns}/tables/orders`)
      const current = direct.json.metadata.schemas.find((s: any) => s['schema-id'] === direct.json.metadata['current-schema-id'])
      t.same(current.fields.map((f: any) => [f.id, f.name, f.type]), [[1, 'id', 'long'], [2, 'amount', 'long']], 'the catalog holds the widened schema and not the refused one')

      const stale = await call(proxy.url, 'POST', `/v1/namespaces/${ns}/tables/orders`, {
        requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
        updates: [{ action: 'set-properties', updates: { owner: 'x' } }]
      })
      const staleDirect = await call(fixture.url, 'POST', `/v1/namespaces/${ns}/tables/orders`, {
        requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
        updates: [{ action: 'set-properties', updates: { owner: 'x' } }]
      })
      t.equal(stale.status, 409, 'a stale requirement is the catalog\'s 409')
      t.same(sameError(stale.json), sameError(staleDirect.json), 'with the catalog\'s own error: message, type, code and the exception it names')

      const missing = await call(proxy.url, 'GET', `/v1/namespaces/${ns}/tables/nope`)
      const missingDirect = await call(fixture.url, 'GET', `/v1/namespaces/${ns}/tables/nope`)
      t.equal(missing.status, 404)
      t.same(sameError(missing.json), sameError(missingDirect.json), 'a missing table is the catalog\'s own 404 error')
    })
  })
})
