/**
 * Decisions of docs/security.md over real HTTP: a break-glass token cannot waive a spec rule (the
 * admin API refuses to mint one; a token naming one, signed by hand, is refused at the gate on
 * every transport and nothing reaches the catalog), and a policy naming a secret other than a
 * webhook's as `secret-env` stops the server at start-up.
 */
import { createHmac } from 'node:crypto'
import t from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, posts } from '../helpers/gate-fixtures.js'

const SECRET = 'admin-hardening-override-secret'
const ADMIN = 'admin-hardening-admin-token'

function handSigned (table: string, rules: string[]): string {
  const now = Math.floor(Date.now() / 1000)
  const body = `igo1.${Buffer.from(JSON.stringify({ v: 1, id: 'handmade', table, rules, reason: 'r', iat: now, exp: now + 600 })).toString('base64url')}`
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`
}

t.test('a policy whose webhook secret-env names the admin token stops the server at start-up', async t => {
  const dir = t.testdir({ 'policy.yaml': 'version: 1\ntables:\n  db.orders:\n    webhooks: [{ url: "https://hooks.example/x", secret-env: ICEGUARD_ADMIN_TOKEN }]\n' })
  await t.rejects(startProxy(t, { upstream: 'http://127.0.0.1:9', policy: `${dir}/policy.yaml`, env: { ICEGUARD_ADMIN_TOKEN: ADMIN } }),
    /secret-env: expected string to match '\^ICEGUARD_WEBHOOK_/)
})

onEveryTransport(t, t => {
  t.test('a spec rule cannot be waived: refused at mint, refused at use, nothing forwarded', async t => {
    const catalog = await startCatalog(t)
    const dir = t.testdir({ state: {} })
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec', 'state-dir': `${dir}/state`, env: { ICEGUARD_OVERRIDE_SECRET: SECRET, ICEGUARD_ADMIN_TOKEN: ADMIN } })
    const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'orders', 2)

    const mint = await request(`${proxy.url}/admin/v1/overrides`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ table: 'db.orders', rules: ['TYPE_PROMOTION_VALID'], ttl: '1h', reason: 'retype qty' })
    })
    const minted = await mint.body.json() as { error?: { message?: string } }
    t.equal(mint.statusCode, 400, 'the admin API refuses to mint it')
    t.match(minted.error?.message, /TYPE_PROMOTION_VALID is an Iceberg spec rule/)

    const meta = await loadMeta(proxy.url, 'db', 'orders')
    const schema = cloneSchema(meta)
    const qty = schema.fields.find(f => f.name === 'qty')
    if (qty === undefined) throw new Error('no qty')
    qty.type = 'string'
    const before = posts(catalog).length
    const res = await request(`${proxy.url}/v1/namespaces/db/tables/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-iceguard-override': handSigned('db.orders', ['TYPE_PROMOTION_VALID']) },
      body: JSON.stringify(clientShapes.java(meta, schema, 'db', 'orders'))
    })
    const answer = await res.body.json() as { error?: { message?: string } }
    t.equal(res.statusCode, 400, 'the int → string retype is refused')
    t.match(answer.error?.message, /cannot be used: TYPE_PROMOTION_VALID is an Iceberg spec rule/, 'the token is refused, not ignored')
    t.equal(posts(catalog).length, before, 'nothing reached the catalog')
    t.equal((await loadMeta(catalog.url, 'db', 'orders')).schemas.length, 1, 'the table keeps its one schema')
  })
})
