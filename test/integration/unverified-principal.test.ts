/**
 * A principal iceguard did not verify is marked as such wherever it shows, and a webhook's chat
 * text cannot carry Slack markup. The attack from the report: a commit adding a column named
 * `<!channel> <https://evil.example/login|sign in again>`, sent with an unsigned JWT saying
 * `sub: alice`, is denied; the decision log, the console, the webhook and the audit line all say
 * `unverified-sub:alice`, nothing lists it as `sub:alice`, and the webhook's `text` shows the name
 * as typed, escaped (`&lt;!channel&gt;`), so it neither pings a channel nor hides a link.
 */
import { createServer } from 'node:http'
import t from 'tap'
import { captureLogLines } from '../helpers/log-lines.js'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { loggerOptions } from '../../src/main/app.js'
import { startCatalog, startProxy, type ProxyOptions } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta } from '../helpers/gate-fixtures.js'

const ADMIN = 'unverified-principal-admin-token'
const HOSTILE = '<!channel> <https://evil.example/login|sign in again> & more'
/** An unsigned JWT (`alg: none`) naming alice: anyone can write one. */
const UNSIGNED = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'alice' })).toString('base64url')}.`

onEveryTransport(t, t => {
  t.test('an unsigned JWT\'s subject is marked unverified; the webhook text escapes Slack markup', async t => {
    const bodies: string[] = []
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => { bodies.push(Buffer.concat(chunks).toString('utf8')); res.writeHead(204).end() })
    })
    await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
    t.teardown(() => { receiver.close() })
    const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

    const { stream, lines } = captureLogLines()
    const dir = t.testdir({ 'policy.yaml': 'version: 1\nextends: builtin:spec\nrules:\n  COLUMN_NAME_PATTERN: error\n', state: {} })
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, {
      upstream: catalog.url,
      policy: `${dir}/policy.yaml`,
      'state-dir': `${dir}/state`,
      env: { ICEGUARD_ADMIN_TOKEN: ADMIN, ICEGUARD_WEBHOOK_URL: hook, ICEGUARD_WEBHOOK_SECRET: 'webhook-secret' },
      app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream } }
    } as unknown as ProxyOptions)
    const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'orders', 2)

    const meta = await loadMeta(proxy.url, 'db', 'orders')
    const schema = cloneSchema(meta)
    schema.fields.push({ id: (meta['last-column-id'] as number) + 1, name: HOSTILE, required: false, type: 'string' })
    const res = await request(`${proxy.url}/v1/namespaces/db/tables/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${UNSIGNED}` },
      body: JSON.stringify(clientShapes.java(meta, schema, 'db', 'orders'))
    })
    await res.body.dump()
    t.equal(res.statusCode, 400, 'the commit is denied')
    await proxy.app.decisions.log.flush()
    await proxy.app.decisions.webhooks.deliverDue(Date.now())

    const admin = { authorization: `Bearer ${ADMIN}` }
    const listed = await (await request(`${proxy.url}/admin/v1/decisions?principal=unverified-sub:alice`, { headers: admin })).body.json() as { decisions: Array<{ id: string, principal: string }> }
    t.equal(listed.decisions.length, 1, 'the decision log records the subject as unverified')
    const claimed = await (await request(`${proxy.url}/admin/v1/decisions?principal=sub:alice`, { headers: admin })).body.json() as { decisions: unknown[] }
    t.equal(claimed.decisions.length, 0, 'nothing is listed as the verified sub:alice')

    const page = await (await request(`${proxy.url}/console/decisions/${listed.decisions[0]?.id ?? ''}`, { headers: admin })).body.text()
    t.match(page, /unverified-sub:alice/, 'the console shows the mark')

    const audit = lines.map(l => JSON.parse(l) as { component?: string, audit?: { principal?: string } }).filter(l => l.component === 'audit').at(-1)?.audit
    t.equal(audit?.principal, 'unverified-sub:alice', 'the audit line carries the mark')

    t.equal(bodies.length, 1, 'one webhook was delivered')
    const event = JSON.parse(bodies[0] ?? '{}') as { type?: string, text?: string, data?: { principal?: string } }
    t.equal(event.type, 'dev.iceguard.decision.denied')
    t.equal(event.data?.principal, 'unverified-sub:alice', 'the webhook data carries the mark')
    const text = event.text ?? ''
    t.match(text, / by unverified-sub:alice/, 'the webhook text names the principal as unverified')
    t.notMatch(text, /[<>]/, 'no < or > is left for Slack to read as markup')
    t.match(text, /&lt;!channel&gt; &lt;https:\/\/evil\.example\/login\|sign in again&gt; &amp; more/, 'the name is shown as typed, escaped')
  })
})
