/**
 * An `https` upstream, on every transport: iceguard speaks TLS to it (the fast lane's pool and
 * undici alike), with Node's certificate checks. The upstream is the embedded catalog behind a
 * TLS terminator whose self-signed certificate is made here with `openssl`; iceguard trusts it
 * through `upstreamTls.ca`, as NODE_EXTRA_CA_CERTS would in production.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { join } from 'node:path'
import tls from 'node:tls'
import t, { type Test } from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta } from '../helpers/gate-fixtures.js'
import { systemTool } from '../helpers/system-tool.js'
import { onEveryTransport } from '../helpers/transports.js'

const openssl = systemTool(['openssl'], 'apt-get install openssl')

/** A key and a self-signed certificate for 127.0.0.1, valid for a day. */
function selfSigned (t: Test, bin: string): { key: Buffer, cert: Buffer } {
  const dir = t.testdir()
  execFileSync(bin, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=iceguard-test-upstream', '-addext', 'subjectAltName=IP:127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
  return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }
}

/** TLS in front of `target` (plain HTTP): counts the TLS connections that reached it. */
async function tlsTerminator (t: Test, target: string, creds: { key: Buffer, cert: Buffer }): Promise<{ url: string, secured: () => number }> {
  const port = Number(new URL(target).port)
  let secured = 0
  const sockets = new Set<net.Socket>()
  const server = tls.createServer(creds, (client) => {
    secured++
    const up = net.connect(port, '127.0.0.1')
    sockets.add(client).add(up)
    client.pipe(up).pipe(client)
    client.on('error', () => up.destroy())
    up.on('error', () => client.destroy())
    client.on('close', () => { sockets.delete(client); up.destroy() })
    up.on('close', () => { sockets.delete(up); client.destroy() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy()
    server.close(() => resolve())
  }))
  return { url: `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`, secured: () => secured }
}

/** One request on `agent`: status and body text. */
function call (url: string, agent: http.Agent, opts: { method?: string, body?: string } = {}): Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', agent, headers: opts.body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

onEveryTransport(t, t => {
  t.test('an https upstream: config, reads, creates and judged commits over TLS, on one kept-alive client connection', { skip: openssl.skip }, async t => {
    const bin = openssl.need(t)
    if (bin === undefined) return
    const creds = selfSigned(t, bin)
    const catalog = await startCatalog(t)
    const front = await tlsTerminator(t, catalog.url, creds)
    const proxy = await startProxy(t, { upstream: front.url, policy: 'builtin:spec', app: { upstreamTls: { ca: creds.cert } } })

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    t.teardown(() => agent.destroy())
    const config = await call(`${proxy.url}/v1/config`, agent)
    t.equal(config.status, 200, 'GET /v1/config first, as PyIceberg and iceberg-js begin')
    t.type(JSON.parse(config.body).defaults, 'object')

    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 't', 2)
    const load = await call(`${proxy.url}/v1/namespaces/db/tables/t`, agent)
    t.equal(load.status, 200, 'a load on the same connection')
    const meta = await loadMeta(catalog.url, 'db', 't')
    t.equal(JSON.parse(load.body).metadata['table-uuid'], meta['table-uuid'], 'the catalog\'s table, read over TLS')

    // A legal schema change is judged and forwarded byte for byte; a narrowing is refused, unsent.
    const wider = cloneSchema(meta)
    wider.fields.push({ id: meta['last-column-id'] + 1, name: 'added', required: false, type: 'string' })
    const good = JSON.stringify(clientShapes.java(meta, wider, 'db', 't'))
    const committed = await call(`${proxy.url}/v1/namespaces/db/tables/t`, agent, { method: 'POST', body: good })
    t.equal(committed.status, 200, `the schema commit was judged and applied (${committed.body.slice(0, 200)})`)
    const arrived = catalog.requests.filter(r => r.method === 'POST' && r.url === '/v1/namespaces/db/tables/t')
    t.equal(arrived.length, 1, 'the catalog received the commit once')
    t.ok(arrived[0]?.body.includes(Buffer.from('"name":"added"')), 'with the client\'s new field')

    const after = await loadMeta(catalog.url, 'db', 't')
    const narrower = cloneSchema(after)
    narrower.fields = narrower.fields.map(f => f.name === 'qty' ? { ...f, type: 'string' } : f)
    const bad = JSON.stringify(clientShapes.java(after, narrower, 'db', 't'))
    const refused = await call(`${proxy.url}/v1/namespaces/db/tables/t`, agent, { method: 'POST', body: bad })
    t.equal(refused.status, 400, 'int to string is not a promotion: refused')
    t.equal(JSON.parse(refused.body).error.code, 400, 'with an ErrorModel')
    t.equal(catalog.requests.filter(r => r.method === 'POST' && r.url === '/v1/namespaces/db/tables/t').length, 1, 'and not forwarded')
    t.ok(front.secured() >= 1, `every request reached the catalog over TLS (${front.secured()} TLS connections)`)
  })

  t.test('an https upstream whose certificate is not trusted: 503 + Retry-After, nothing forwarded', { skip: openssl.skip }, async t => {
    const bin = openssl.need(t)
    if (bin === undefined) return
    const creds = selfSigned(t, bin)
    const catalog = await startCatalog(t)
    const front = await tlsTerminator(t, catalog.url, creds)
    const proxy = await startProxy(t, { upstream: front.url, 'retry-after': '7' })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    t.teardown(() => agent.destroy())
    for (const [what, path, method, body] of [
      ['config', '/v1/config', 'GET', undefined],
      ['read', '/v1/namespaces/db/tables/t', 'GET', undefined],
      ['data commit', '/v1/namespaces/db/tables/t', 'POST', '{"updates":[{"action":"set-properties","updates":{"k":"v"}}]}']
    ] as const) {
      const res = await call(`${proxy.url}${path}`, agent, { method, body })
      t.equal(res.status, 503, `${what}: 503`)
      t.equal(res.headers['retry-after'], '7', `${what}: Retry-After`)
      t.equal(JSON.parse(res.body).error.code, 503, `${what}: an ErrorModel`)
    }
    t.same(catalog.requests, [], 'nothing reached the catalog')
  })
})
