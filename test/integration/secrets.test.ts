/**
 * Secrets and trust: the proxy's logs (pino at trace level, captured) of full flows never hold a
 * credential it saw — bearer and basic tokens, cookies, override tokens, the admin token, or the
 * credentials a loadTable answer carries in `config` and `storage-credentials`. And the upstream
 * is fixed by configuration: no request target or header can point the proxy anywhere else.
 */
import net from 'node:net'
import t from 'tap'
import { captureLogLines } from '../helpers/log-lines.js'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { loggerOptions } from '../../src/main/app.js'
import { startProxy, startRecordingUpstream, type ProxyOptions } from '../helpers/index.js'
import { fixtureMeta, schemaCommitFor, TABLE } from '../helpers/fault-upstream.js'
import { onEveryTransport } from '../helpers/transports.js'

const SECRETS = {
  bearer: 'bearer-s3cr3t-0a1b2c3d4e5f',
  basicPassword: 'basic-pa55word-9f8e7d',
  cookie: 'session-cookie-s3cr3t-77aa',
  override: 'override-token-s3cr3t-4242',
  apiKey: 'api-key-s3cr3t-1357',
  admin: 'admin-token-s3cr3t-8642',
  s3Secret: 'aws-secret-key-s3cr3t-XYZ123',
  s3Session: 'aws-session-token-s3cr3t-QRS',
  vended: 'vended-credential-s3cr3t-LMN',
  configToken: 'config-token-s3cr3t-OPQ',
  oauthSecret: 'oauth-client-secret-s3cr3t-RST',
  accessToken: 'oauth-access-token-s3cr3t-UVW'
}

/** A loadTable answer as a catalog vending credentials sends it. */
function loadAnswer (): string {
  return JSON.stringify({
    'metadata-location': 's3://warehouse/db/t/metadata/00001.json',
    metadata: fixtureMeta(),
    config: {
      's3.access-key-id': 'AKIAEXAMPLE',
      's3.secret-access-key': SECRETS.s3Secret,
      's3.session-token': SECRETS.s3Session,
      token: SECRETS.configToken
    },
    'storage-credentials': [{ prefix: 's3://warehouse/', config: { 's3.secret-access-key': SECRETS.vended } }]
  })
}

onEveryTransport(t, t => {
  t.test('no secret reaches a log line, whatever the flow', async t => {
    let failNext: 'refuse' | '500' | undefined
    const up = await startRecordingUpstream(t, (req, res) => {
      if (failNext === 'refuse') { res.socket?.destroy(); return }
      const status = failNext === '500' ? 500 : 200
      let body = '{}'
      if (req.url.includes('/oauth/tokens')) body = JSON.stringify({ access_token: SECRETS.accessToken, token_type: 'bearer', expires_in: 3600 })
      else if (req.url.startsWith('/v1/config')) body = JSON.stringify({ defaults: { token: SECRETS.configToken }, overrides: { uri: 'http://elsewhere' } })
      else if (req.method === 'GET') body = loadAnswer()
      else if (status === 200 && req.method === 'POST' && req.url.includes('/tables/')) body = loadAnswer()
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'set-cookie': `upstream=${SECRETS.cookie}` })
      res.end(body)
    })
    const log = captureLogLines()
    const proxy = await startProxy(t, {
      upstream: up.url,
      policy: 'builtin:recommended',
      env: { ICEGUARD_ADMIN_TOKEN: SECRETS.admin, ICEGUARD_OVERRIDE_SECRET: 'override-hmac-secret-0123456789' },
      app: { logger: { ...loggerOptions({ logLevel: 'trace' }) as object, stream: log.stream } }
    } as unknown as ProxyOptions)

    const headers = {
      authorization: `Bearer ${SECRETS.bearer}`,
      cookie: `sid=${SECRETS.cookie}`,
      'x-api-key': SECRETS.apiKey,
      'content-type': 'application/json'
    }
    const call = async (method: string, path: string, body?: string, extra: Record<string, string> = {}): Promise<number> => {
      const res = await request(`${proxy.url}${path}`, { method: method as 'POST', body, headers: { ...headers, ...extra } })
      await res.body.dump()
      return res.statusCode
    }

    // iceberg-js with a bearer token: config, load (credentials in the answer), a schema commit.
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url, auth: { type: 'bearer', token: SECRETS.bearer } })
    const loaded = await ice.loadTable({ namespace: ['db'], name: 't' })
    t.equal(loaded['table-uuid'], fixtureMeta()['table-uuid'], 'iceberg-js loads through the proxy')
    await ice.updateTable({ namespace: ['db'], name: 't' }, schemaCommitFor(fixtureMeta()) as never)

    t.equal(await call('GET', '/v1/config'), 200)
    t.equal(await call('GET', TABLE), 200, 'a loadTable pass-through')
    t.equal(await call('POST', TABLE, '{"updates":[{"action":"set-properties","updates":{"k":"v"}}]}'), 200, 'a data commit')
    t.equal(await call('POST', TABLE, JSON.stringify(schemaCommitFor(fixtureMeta()))), 200, 'a schema commit (base load with credentials)')
    // `id` long → int: a narrowing the spec forbids.
    const drop = schemaCommitFor(fixtureMeta(), []) as { updates: Array<{ schema?: { fields: Array<{ type: string }> } }> }
    drop.updates[0]!.schema!.fields[0]!.type = 'int'
    t.equal(await call('POST', TABLE, JSON.stringify(drop), { 'x-iceguard-override': SECRETS.override }), 400, 'a bad override token is refused')
    t.equal(await call('POST', TABLE, JSON.stringify(drop), { authorization: `Basic ${Buffer.from(`alice:${SECRETS.basicPassword}`).toString('base64')}` }), 400, 'a denied narrowing, with basic auth')
    t.equal(await call('POST', '/v1/oauth/tokens', `grant_type=client_credentials&client_id=c&client_secret=${SECRETS.oauthSecret}`, { 'content-type': 'application/x-www-form-urlencoded' }), 200, 'an OAuth token exchange')
    failNext = '500'
    t.equal(await call('POST', TABLE, JSON.stringify(schemaCommitFor(fixtureMeta()))), 503, 'a base load answered 500')
    failNext = 'refuse'
    t.equal(await call('POST', TABLE, JSON.stringify(schemaCommitFor(fixtureMeta()))), 503, 'a base load cut off')
    t.equal(await call('GET', TABLE), 502, 'a read cut off')
    t.ok([502, 504].includes(await call('POST', TABLE, '{"updates":[{"action":"set-properties","updates":{}}]}')), 'a data commit cut off')
    failNext = undefined
    t.equal(await call('POST', '/admin/v1/policy/reload', undefined, { authorization: `Bearer ${SECRETS.admin}` }), 200, 'admin reload with the right token')
    t.equal(await call('POST', '/admin/v1/policy/reload', undefined, { authorization: `Bearer ${SECRETS.admin}x` }), 401, 'admin reload with a wrong token')
    t.equal(await call('POST', '/admin/v1/validate', JSON.stringify({ table: { namespace: ['db'], name: 't' }, request: schemaCommitFor(fixtureMeta()) }), { 'x-iceguard-admin-token': SECRETS.admin }), 200, 'a dry run loading the table (admin token beside the catalog\'s)')
    // Oversized headers with a credential: refused by the HTTP parser, whose error holds the raw bytes.
    await new Promise<void>((resolve) => {
      const sock = net.connect(Number(new URL(proxy.url).port), '127.0.0.1', () => {
        sock.write(`GET ${TABLE} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${SECRETS.bearer}\r\nx-pad: ${'p'.repeat(70_000)}\r\n\r\n`)
      })
      sock.on('data', () => {})
      sock.on('error', () => resolve())
      sock.on('close', () => resolve())
    })

    await proxy.close()
    t.ok(log.lines.length > 10, `the flows were logged (${log.lines.length} lines)`)
    t.ok(log.lines.some(l => l.includes('"component":"audit"')), 'audit lines are among them')
    const all = log.lines.join('\n')
    for (const [name, secret] of Object.entries(SECRETS)) {
      t.notOk(all.includes(secret), `${name} appears in no log line`)
    }
    t.notOk(all.includes(Buffer.from(`alice:${SECRETS.basicPassword}`).toString('base64')), 'nor the basic credential in base64')
  })

  t.test('the upstream is fixed by configuration', async t => {
    const up = await startRecordingUpstream(t)
    const evil = await startRecordingUpstream(t)
    const evilHost = new URL(evil.url).host
    const proxy = await startProxy(t, { upstream: `${up.url}/catalog` })
    const raw = (head: string): Promise<string> => new Promise((resolve) => {
      const sock = net.connect(Number(new URL(proxy.url).port), '127.0.0.1', () => sock.write(head))
      let text = ''
      sock.on('data', (c: Buffer) => { text += c.toString('latin1') })
      sock.on('error', () => resolve(text))
      sock.on('close', () => resolve(text))
    })

    // Absolute-form targets (what a forward proxy would follow): never a connection to that host.
    for (const method of ['GET', 'POST']) {
      const answer = await raw(`${method} http://${evilHost}/v1/namespaces/db/tables/t HTTP/1.1\r\nhost: ${evilHost}\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`)
      t.match(answer, /^HTTP\/1\.1 4\d\d /, `${method} absolute-form: a 4xx`)
      t.match(answer, /"code":4\d\d/, `${method} absolute-form: an ErrorModel`)
    }
    // Host and X-Forwarded-Host naming another server: the request still goes to the configured upstream.
    const before = up.requests.length
    const res = await request(`${proxy.url}/v1/namespaces/db/tables/t`, { headers: { host: evilHost, 'x-forwarded-host': evilHost, forwarded: `host=${evilHost}` } })
    t.equal(res.statusCode, 200)
    await res.body.dump()
    t.equal(up.requests.length, before + 1, 'the configured upstream got it')
    const got = up.requests.at(-1)!
    t.equal(got.url, '/catalog/v1/namespaces/db/tables/t', 'on the configured base path')
    t.equal(got.headers.host, new URL(up.url).host, 'with the upstream\'s own Host')
    // A commit, a config call and a gated commit, all with hostile Host headers.
    for (const [method, path, body] of [['POST', TABLE, '{"updates":[{"action":"set-properties","updates":{}}]}'], ['GET', '/v1/config', undefined], ['POST', '/v1/namespaces/db/tables', '{"name":"x","schema":{"type":"struct","fields":[]}}']] as const) {
      const r = await request(`${proxy.url}${path}`, { method, body, headers: { host: evilHost, 'content-type': 'application/json' } })
      await r.body.dump()
    }
    t.equal(evil.requests.length, 0, 'the other server was never contacted')
    t.ok(up.requests.every(r => r.url.startsWith('/catalog/v1/')), 'everything stayed under the configured base path')
  })

  t.test('the admin token is checked in constant time and answers by kind of failure', async t => {
    const up = await startRecordingUpstream(t)
    const proxy = await startProxy(t, { upstream: up.url, env: { ICEGUARD_ADMIN_TOKEN: SECRETS.admin } } as unknown as ProxyOptions)
    const reload = async (authorization?: string): Promise<{ status: number, body: { error?: { code: number, type: string } } }> => {
      const r = await request(`${proxy.url}/admin/v1/policy/reload`, { method: 'POST', headers: authorization === undefined ? {} : { authorization } })
      return { status: r.statusCode, body: await r.body.json() as { error?: { code: number, type: string } } }
    }
    t.equal((await reload(`Bearer ${SECRETS.admin}`)).status, 200, 'the right token')
    const missing = await reload()
    t.equal(missing.status, 401, 'no token: 401')
    t.equal(missing.body.error?.code, 401)
    // Wrong tokens of every length, including a prefix and an extension of the right one: all the same 401 (RFC 6750 invalid_token).
    for (const wrong of ['x', SECRETS.admin.slice(0, -1), `${SECRETS.admin}x`, SECRETS.admin.toUpperCase(), 'a'.repeat(4096)]) {
      const r = await reload(`Bearer ${wrong}`)
      t.equal(r.status, 401, `wrong token of length ${wrong.length}: 401`)
      t.equal(r.body.error?.type, 'NotAuthorizedException')
    }
  })
})
