/**
 * Webhooks end to end: a local receiver gets CloudEvents for denied, overridden and warned
 * decisions, signed with HMAC-SHA256 of the body; the global endpoint fails once and the same
 * event arrives again on the retry (at least once). A scope's endpoint from the policy gets only
 * the events it asked for, signed with its own secret.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { cloneSchema, clientShapes, createFixtureTable, loadMeta } from '../helpers/gate-fixtures.js'

const GLOBAL_SECRET = 'global-webhook-secret'
const SCOPED_SECRET = 'scoped-webhook-secret'
const ADMIN = 'admin-token-for-tests'

interface Delivery { path: string, headers: IncomingHttpHeaders, body: string }

function verified (d: Delivery, secret: string): boolean {
  const given = String(d.headers['x-iceguard-signature'] ?? '')
  const expected = `sha256=${createHmac('sha256', secret).update(d.body).digest('hex')}`
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}

t.test('denied, overridden and warned decisions reach the webhooks, signed, at least once', async t => {
  // The receiver: the global endpoint fails its first delivery.
  const deliveries: Delivery[] = []
  let failGlobal = 1
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      deliveries.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      if (req.url === '/global' && failGlobal > 0) {
        failGlobal--
        res.writeHead(500).end('not now')
      } else {
        res.writeHead(204).end()
      }
    })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { receiver.close() })
  const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`

  const work = mkdtempSync(join(tmpdir(), 'iceguard-webhooks-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const policy = join(work, 'policy.yaml')
  writeFileSync(policy, [
    'version: 1',
    'extends: builtin:spec',
    'tables:',
    '  db.orders:',
    '    rules: { COLUMN_NO_DROP: error }',
    `    webhooks: [{ url: "${hook}/scoped", secret-env: ICEGUARD_WEBHOOK_TEST_SCOPED_SECRET, events: [denied] }]`,
    '  db.staging:',
    '    mode: warn',
    '    rules: { COLUMN_NO_DROP: error }',
    ''
  ].join('\n'))
  process.env.ICEGUARD_WEBHOOK_TEST_SCOPED_SECRET = SCOPED_SECRET
  t.teardown(() => { delete process.env.ICEGUARD_WEBHOOK_TEST_SCOPED_SECRET })

  const catalog = await startCatalog(t)
  const proxy = await startProxy(t, {
    upstream: catalog.url,
    policy,
    env: { ICEGUARD_WEBHOOK_URL: `${hook}/global`, ICEGUARD_WEBHOOK_SECRET: GLOBAL_SECRET, ICEGUARD_ADMIN_TOKEN: ADMIN, ICEGUARD_OVERRIDE_SECRET: 'override-secret-for-tests-0123456789' }
  })
  const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 'orders', 2)
  await createFixtureTable(ice, 'staging', 2)

  const dropQty = async (table: string, headers: Record<string, string> = {}): Promise<number> => {
    const meta = await loadMeta(proxy.url, 'db', table)
    const s = cloneSchema(meta)
    s.fields = s.fields.filter(f => f.name !== 'qty')
    const res = await request(`${proxy.url}/v1/namespaces/db/tables/${table}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(clientShapes.java(meta, s, 'db', table))
    })
    await res.body.dump()
    return res.statusCode
  }
  // `at` is read once the flush is done: an event queued during it is due from its own insert time.
  const deliverAll = async (later = 0): Promise<void> => {
    await proxy.app.decisions.log.flush()
    await proxy.app.decisions.webhooks.deliverDue(Date.now() + later)
  }

  t.equal(await dropQty('orders'), 400, 'the drop on db.orders is denied')
  await deliverAll()
  const scoped = deliveries.filter(d => d.path === '/scoped')
  const firstGlobal = deliveries.filter(d => d.path === '/global')
  t.equal(scoped.length, 1, 'the scope\'s endpoint got the denial')
  t.ok(verified(scoped[0]!, SCOPED_SECRET), 'signed with the scope\'s secret')
  t.equal(firstGlobal.length, 1, 'the global endpoint was tried')

  const event = JSON.parse(scoped[0]!.body)
  t.match(scoped[0]!.headers['content-type'], /^application\/cloudevents\+json/, 'structured-mode CloudEvent')
  t.match(event, {
    specversion: '1.0',
    type: 'dev.iceguard.decision.denied',
    source: 'urn:iceguard',
    subject: 'db.orders',
    datacontenttype: 'application/json',
    text: /iceguard: update-table on db\.orders denied \(COLUMN_NO_DROP\): Cannot drop/
  }, 'its attributes and a Slack-compatible text')
  const stored = await request(`${proxy.url}/admin/v1/decisions/${event.id as string}`, { headers: { authorization: `Bearer ${ADMIN}` } })
  t.same(event.data, await stored.body.json(), 'data is the decision as the API shows it')

  // The retry, once its backoff has passed (the clock is moved, not waited for).
  await deliverAll(3600_000)
  const globals = deliveries.filter(d => d.path === '/global')
  t.equal(globals.length, 2, 'the global endpoint got the event again after its failure')
  t.equal(globals[1]!.body, globals[0]!.body, 'the very same event (same id): at least once')
  t.ok(verified(globals[1]!, GLOBAL_SECRET), 'signed with the global secret')
  await deliverAll(7200_000)
  t.equal(deliveries.filter(d => d.path === '/global').length, 2, 'a delivered event is not sent again')

  const minted = await request(`${proxy.url}/admin/v1/overrides`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttl: '1h', reason: 'incident 9' })
  })
  const { token, override } = await minted.body.json() as { token: string, override: { id: string } }
  t.equal(await dropQty('orders', { 'x-iceguard-override': token }), 200, 'with an override the drop goes through')
  t.equal(await dropQty('staging'), 200, 'in warn mode the drop goes through with a warning')
  await deliverAll()
  const later = deliveries.slice(3)
  t.same(later.map(d => d.path), ['/global', '/global'], 'both go to the global endpoint only (the scope asked for denials)')
  // Due together, so delivered in no particular order.
  const types = later.map(d => JSON.parse(d.body) as { type: string, data: { override: { id: string } | null }, text: string })
    .sort((a, b) => a.type.localeCompare(b.type))
  t.match(types, [
    { type: 'dev.iceguard.decision.overridden', data: { override: { id: override.id } }, text: new RegExp(`override ${override.id}`) },
    { type: 'dev.iceguard.decision.warned', data: { override: null }, text: /db\.staging let through with warnings/ }
  ], 'one overridden event, one warned event')
  t.ok(later.every(d => verified(d, GLOBAL_SECRET)), 'each signed')
})
