/**
 * An override token is for one table by its namespace levels and name, not for a dotted string:
 * a token minted for `a.b.c` waives its rule on namespace `a`/`b`, table `c`, and on none of the
 * tables that print alike (namespace `a` with table `b.c`, the one-level namespace `a.b` with table
 * `c`). Checked through the gate on every transport, with nothing reaching the catalog for the
 * refused ones, and in the console's "Overrides in force".
 */
import t from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { mintOverride, verifyOverride } from '../../src/policy/override-token.js'
import { grantFor } from '../../src/gate/override.js'
import { memoryOverrideSource } from '../../src/console/override-source.js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, posts } from '../helpers/gate-fixtures.js'

const SECRET = 'override-binding-secret-0123456'
const ADMIN = 'override-binding-admin-token'
const POLICY = 'version: 1\nextends: builtin:spec\nrules:\n  COLUMN_NO_DROP: error\n'

/** The target table and the three that print alike. */
const TABLES = [
  { what: 'namespace a / b, table c (the token\'s table)', namespace: ['a', 'b'], name: 'c', waived: true },
  { what: 'namespace a, table b.c', namespace: ['a'], name: 'b.c', waived: false },
  { what: 'one-level namespace a.b, table c', namespace: ['a.b'], name: 'c', waived: false }
] as const

const token = (): string => mintOverride({ table: 'a.b.c', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'binding test', secret: SECRET })

t.test('the token verifies for its table alone, by levels', async t => {
  const tok = token()
  for (const table of TABLES) {
    const result = verifyOverride(tok, { table, secret: SECRET })
    t.equal(result.ok, table.waived, `${table.what}: ${table.waived ? 'verifies' : 'refused'}`)
    if (!result.ok) t.match(result.error, /is for table a\.b\.c \(namespace "a" \/ "b", table "c"\), not namespace/, 'the refusal names both tables by their levels')
    const grant = { id: 'x', table: 'a.b.c', rules: ['COLUMN_NO_DROP'], reason: 'r', expiresAt: '' }
    t.equal(grantFor(grant, table) !== undefined, table.waived, `${table.what}: grantFor agrees`)
  }
  t.throws(() => mintOverride({ table: 'a..c', rules: ['COLUMN_NO_DROP'], ttlSeconds: 60, reason: 'r', secret: SECRET }), /levels and name separated by dots, none empty/)
})

t.test('the console lists a record only on its own table', async t => {
  const source = memoryOverrideSource([{ id: 'o1', table: 'a.b.c', rules: ['COLUMN_NO_DROP'], expires: new Date(Date.now() + 60_000).toISOString() }])
  for (const table of TABLES) {
    t.equal((await source.inForce(table, new Date())).length, table.waived ? 1 : 0, table.what)
  }
})

onEveryTransport(t, t => {
  t.test('through the gate: the rule is waived on the token\'s table only', async t => {
    const dir = t.testdir({ 'policy.yaml': POLICY, state: {} })
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url, policy: `${dir}/policy.yaml`, 'state-dir': `${dir}/state`, env: { ICEGUARD_OVERRIDE_SECRET: SECRET, ICEGUARD_ADMIN_TOKEN: ADMIN } })
    const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
    for (const ns of [['a'], ['a', 'b'], ['a.b']]) await ice.createNamespace({ namespace: ns })
    for (const table of TABLES) await createFixtureTable(ice, table.name, 2, [...table.namespace])
    const tok = token()
    // Refused tables first, so the waived commit's new schema cannot be mistaken for theirs.
    for (const table of [...TABLES].reverse()) {
      const segment = table.namespace.join('\u001f')
      const meta = await loadMeta(proxy.url, segment, table.name)
      const schema = cloneSchema(meta)
      schema.fields = schema.fields.filter(f => f.name !== 'qty')
      const before = posts(catalog).length
      const res = await request(`${proxy.url}/v1/namespaces/${encodeURIComponent(segment)}/tables/${encodeURIComponent(table.name)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-iceguard-override': tok },
        body: JSON.stringify(clientShapes.java(meta, schema, segment, table.name))
      })
      const text = await res.body.text()
      if (table.waived) {
        t.equal(res.statusCode, 200, `${table.what}: the drop is committed under the override (${text})`)
        t.equal(posts(catalog).length, before + 1, 'and reached the catalog')
      } else {
        t.equal(res.statusCode, 400, `${table.what}: refused`)
        t.match(text, /Override token .* is for table a\.b\.c/, 'the token is refused, not ignored')
        t.equal(posts(catalog).length, before, 'nothing reached the catalog')
        t.ok((await loadMeta(catalog.url, segment, table.name)).schemas[0]?.fields.some(f => f.name === 'qty'), 'the column is still there')
      }
    }
  })
})
