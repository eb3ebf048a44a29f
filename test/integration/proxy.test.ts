import { spawn } from 'node:child_process'
import http from 'node:http'
import net from 'node:net'
import { gzipSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import { startCatalog, startProxy, startRecordingUpstream, jsonResponder } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'

const BIG_ID = '3055729675574597004'

/** A raw HTTP/1.1 exchange (no fetch): exact headers out, exact bytes back, no decompression. */
function rawRequest (url: string, opts: { method?: string, headers?: Record<string, string | string[]>, body?: string | Buffer } = {}):
Promise<{ status: number, headers: http.IncomingHttpHeaders, body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

function closedPort (): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

const schemaV0 = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', type: 'long', required: true },
    { id: 2, name: 'ts', type: 'timestamptz', required: false }
  ]
}

t.test('npm start entry point: no upstream → embedded catalog answers /v1/config', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts', '--port', '0', '--host', '127.0.0.1', '--memory'], {
    cwd: new URL('../..', import.meta.url).pathname,
    env: { ...process.env, ICEGUARD_UPSTREAM_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  const listening = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)))
  })
  t.match(out, /embedded development catalog/)
  const res = await fetch(`${listening}/v1/config`)
  t.equal(res.status, 200)
  const config = await res.json() as { defaults: unknown, overrides: Record<string, unknown> }
  t.ok(config.defaults)
  t.notOk('uri' in config.overrides)
  child.kill('SIGTERM')
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.equal(code, 0, 'graceful exit on SIGTERM')
})

t.test('entry point rejects bad configuration with one line per problem', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts', '--port', 'x', '--upstream', 'nope'], {
    cwd: new URL('../..', import.meta.url).pathname,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.equal(code, 2)
  t.match(err, /--port\/ICEGUARD_PORT: "x"/)
  t.match(err, /--upstream\/ICEGUARD_UPSTREAM_URL: "nope" is not a URL/)
})

onEveryTransport(t, t => {
  t.test('iceberg-js through the proxy against the embedded catalog', async (t) => {
    const setups = [
      { name: 'no prefix', catalog: {}, client: {} },
      { name: 'with a prefix from /v1/config', catalog: { prefix: 'wh1' }, client: { warehouse: 'wh1' } },
      { name: 'upstream URL with a base path', catalog: { basePath: '/api/catalog', prefix: 'p' }, client: { warehouse: 'p' } }
    ]
    for (const setup of setups) {
      t.test(setup.name, async (t) => {
        const catalog = await startCatalog(t, setup.catalog)
        const proxy = await startProxy(t, { upstream: catalog.url })
        const client = new IcebergRestCatalog({ baseUrl: proxy.url, auth: { type: 'bearer', token: 'T0K' }, ...setup.client })

        await client.createNamespace({ namespace: ['db'] }, { properties: { owner: 'alice' } })
        await client.createNamespace({ namespace: ['db', 'nested ns'] })
        const top = await client.listNamespaces()
        t.same(top.namespaces, [{ namespace: ['db'] }])
        const children = await client.listNamespaces({ parent: { namespace: ['db'] } })
        t.same(children.namespaces, [{ namespace: ['db', 'nested ns'] }])

        const ns = { namespace: ['db', 'nested ns'] }
        const created = await client.createTable(ns, { name: 'events', schema: schemaV0 })
        t.equal(created['current-schema-id'], 0)
        const id = { namespace: ['db', 'nested ns'], name: 'events' }
        const loaded = await client.loadTable(id)
        t.equal(loaded['table-uuid'], created['table-uuid'])

        const committed = await client.updateTable(id, {
          requirements: [
            { type: 'assert-table-uuid', uuid: loaded['table-uuid'] },
            { type: 'assert-current-schema-id', 'current-schema-id': 0 },
            { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 2 }
          ],
          updates: [
            { action: 'add-schema', schema: { ...schemaV0, 'schema-id': 1, fields: [...schemaV0.fields, { id: 3, name: 'user_id', type: 'string', required: false }] }, 'last-column-id': 3 },
            { action: 'set-current-schema', 'schema-id': -1 }
          ]
        } as never)
        t.ok(committed['metadata-location'])
        const after = await client.loadTable(id)
        t.equal(after['current-schema-id'], 1)
        t.same(after.schemas.find((s) => s['schema-id'] === 1)?.fields.map((f) => f.name), ['id', 'ts', 'user_id'])

        await client.renameTable({ source: id, destination: { namespace: ['db'], name: 'events2' } })
        t.equal(await client.tableExists(id), false)
        t.equal(await client.tableExists({ namespace: ['db'], name: 'events2' }), true)
        await client.dropTable({ namespace: ['db'], name: 'events2' })
        t.equal(await client.tableExists({ namespace: ['db'], name: 'events2' }), false)

        // What arrived upstream: the %1F separator and the base path, untouched.
        const urls = catalog.requests.map((r) => `${r.method} ${r.url}`)
        const base = (setup.catalog as { basePath?: string }).basePath ?? ''
        t.ok(urls.some((u) => u.startsWith(`POST ${base}/v1/`) && u.includes('/namespaces/db%1Fnested%20ns/tables/events')), 'commit path with %1F reached the upstream')
        t.ok(urls.every((u) => u.split(' ')[1]?.startsWith(`${base}/v1/`)), 'every request carries the base path')
        const commit = catalog.requests.find((r) => r.method === 'POST' && r.url.endsWith('/tables/events'))
        t.equal(commit?.headers.authorization, 'Bearer T0K', 'Authorization forwarded')
        t.ok(commit?.headers['idempotency-key'], 'Idempotency-Key forwarded')
      })
    }
  })

  t.test('a 64-bit snapshot id travels byte for byte and reads back with the same digits', async (t) => {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url })
    const client = new IcebergRestCatalog({ baseUrl: proxy.url })
    await client.createNamespace({ namespace: ['db'] })
    const table = await client.createTable({ namespace: ['db'] }, { name: 't', schema: schemaV0 })
    const body = `{"requirements":[{"type":"assert-table-uuid","uuid":"${table['table-uuid']}"},{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],` +
    `"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID},"sequence-number":1,"timestamp-ms":1700000000000,` +
    `"manifest-list":"file:///tmp/snap-${BIG_ID}.avro","summary":{"operation":"append"},"schema-id":0}},` +
    `{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG_ID}}]}`
    catalog.clearRequests()
    const res = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    t.equal(res.status, 200, res.body.toString())
    const arrived = catalog.requests.find((r) => r.method === 'POST')
    t.ok(arrived?.body.equals(Buffer.from(body)), 'the upstream received the exact bytes')
    t.match(res.body.toString(), `"current-snapshot-id":${BIG_ID}`)
    const loaded = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`)
    t.match(loaded.body.toString(), `"snapshot-id":${BIG_ID}`)
    t.match(loaded.body.toString(), `"current-snapshot-id":${BIG_ID}`)

    // A schema commit takes the gated (buffered) path; accepted, it is forwarded as the same bytes.
    const schemaCommit = `{"requirements":[{"type":"assert-table-uuid","uuid":"${table['table-uuid']}"},` +
    '{"type":"assert-current-schema-id","current-schema-id":0},{"type":"assert-last-assigned-field-id","last-assigned-field-id":2}],' +
    '"updates":[{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":"long","required":true},' +
    '{"id":2,"name":"ts","type":"timestamptz","required":false},{"id":3,"name":"note","type":"string","required":false}]},"last-column-id":3},' +
    `{"action":"set-current-schema","schema-id":-1},{"action":"set-snapshot-ref","ref-name":"v1","type":"tag","snapshot-id":${BIG_ID}}]}`
    catalog.clearRequests()
    const gated = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: schemaCommit })
    t.equal(gated.status, 200, gated.body.toString())
    const forwarded = catalog.requests.find((r) => r.method === 'POST')
    t.ok(forwarded?.body.equals(Buffer.from(schemaCommit)), 'the gated commit reached the upstream byte for byte')
    t.match(gated.body.toString(), `"v1":{"snapshot-id":${BIG_ID}`)
  })

  t.test('against a recording upstream', async (t) => {
    t.test('method, raw path and query forwarded exactly; base path prefixed; headers', async (t) => {
      const up = await startRecordingUpstream(t)
      const proxy = await startProxy(t, { upstream: `${up.url}/api/catalog` })
      const path = '/v1/my+wh/namespaces/a%1Fb%20c/tables/x%2Fy?snapshots=refs&odd=%1F%2B+'
      const res = await rawRequest(proxy.url + path, {
        headers: {
          Connection: 'keep-alive, X-Hop-Only',
          'Keep-Alive': 'timeout=5',
          'X-Hop-Only': 'secret',
          TE: 'trailers',
          'Proxy-Authorization': 'Basic Zm9vOmJhcg==',
          Authorization: 'Bearer abc',
          'If-None-Match': '"v1"',
          'X-Iceberg-Access-Delegation': 'vended-credentials',
          'X-Forwarded-For': '203.0.113.9'
        }
      })
      t.equal(res.status, 200)
      const got = up.requests[0]
      t.equal(got?.method, 'GET')
      // The path in its canonical spelling (a Java-style `+` is a space, %20); the query byte for byte.
      t.equal(got?.url, `/api/catalog${path.replace('my+wh', 'my%20wh')}`)
      const h = got?.headers ?? {}
      t.equal(h.authorization, 'Bearer abc')
      t.equal(h['if-none-match'], '"v1"')
      t.equal(h['x-iceberg-access-delegation'], 'vended-credentials')
      t.equal(h['x-forwarded-for'], '203.0.113.9, 127.0.0.1')
      t.equal(h['x-forwarded-proto'], 'http')
      t.equal(h['x-forwarded-host'], new URL(proxy.url).host)
      t.equal(h.host, new URL(up.url).host, 'Host is the upstream\'s')
      for (const hop of ['x-hop-only', 'keep-alive', 'te', 'proxy-authorization']) t.notOk(hop in h, `${hop} dropped`)
    })

    t.test('bodies: pass-through and fast-path commits reach the upstream byte for byte', async (t) => {
      const up = await startRecordingUpstream(t)
      const proxy = await startProxy(t, { upstream: up.url })
      const cases = [
        ['/v1/namespaces', `{"namespace":["db"],"properties":{"n":${BIG_ID}}}`],
        ['/v1/namespaces/db/tables/t', `{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID}}}]}`],
        ['/v1/namespaces/db/tables/t', `{"updates":[{"action":"remove-snapshots","snapshot-ids":[${BIG_ID}]}],"x":${BIG_ID}.10}`],
        ['/v1/pfx/transactions/commit', '{"table-changes":[{"identifier":{"namespace":["db"],"name":"t"},"updates":[{"action":"set-properties","updates":{"a":"\u00e9"}}]}]}'],
        ['/v1/namespaces/db/properties', '{"updates":{"a":"b"}}  ']
      ] as const
      for (const [path, body] of cases) {
        const res = await rawRequest(proxy.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        t.equal(res.status, 200)
      }
      // A chunked request body (no Content-Length) is forwarded intact too.
      const chunked = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${proxy.url}/v1/namespaces/db/tables/t`, { method: 'POST', agent: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0) })
        req.on('error', reject)
        req.write('{"updates":[{"action":')
        setImmediate(() => req.end('"add-snapshot"}]}'))
      })
      t.equal(chunked, 200)
      t.same(up.requests.map((r) => r.body.toString()), [...cases.map(([, b]) => b), '{"updates":[{"action":"add-snapshot"}]}'])
      t.same(up.requests.map((r) => r.url), [...cases.map(([p]) => p), '/v1/namespaces/db/tables/t'])
    })

    t.test('response status, headers and bytes relayed: ETag, 304, Content-Encoding, errors, 1 MB', async (t) => {
      const big = Buffer.alloc(1024 * 1024, 'x')
      const gz = gzipSync(Buffer.from('{"metadata":{}}'))
      const up = await startRecordingUpstream(t, (req, res) => {
        if (req.url.endsWith('/etag')) {
          if (req.headers['if-none-match'] === '"m1"') { res.writeHead(304, { etag: '"m1"' }); res.end(); return }
          res.writeHead(200, { etag: '"m1"', 'content-type': 'application/json' })
          res.end('{"metadata":{}}')
        } else if (req.url.endsWith('/gzip')) {
          res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json', 'content-length': gz.length })
          res.end(gz)
        } else if (req.url.endsWith('/big')) {
          res.writeHead(200, { 'content-type': 'application/json' })
          res.write(big.subarray(0, 1000))
          setImmediate(() => res.end(big.subarray(1000)))
        } else {
          jsonResponder(409, { error: { message: 'Requirement failed: branch main was created concurrently', type: 'CommitFailedException', code: 409 } }, { 'x-upstream': 'yes' })(req, res)
        }
      })
      const proxy = await startProxy(t, { upstream: up.url })
      const first = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/etag`)
      t.equal(first.status, 200)
      t.equal(first.headers.etag, '"m1"')
      const second = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/etag`, { headers: { 'if-none-match': '"m1"' } })
      t.equal(second.status, 304)
      t.equal(second.body.length, 0)
      const zipped = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/gzip`, { headers: { 'accept-encoding': 'gzip' } })
      t.equal(zipped.headers['content-encoding'], 'gzip')
      t.ok(zipped.body.equals(gz), 'compressed bytes relayed untouched')
      t.equal(gunzipSync(zipped.body).toString(), '{"metadata":{}}')
      const large = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/big`)
      t.ok(large.body.equals(big), '1 MiB streamed intact')
      for (const path of ['/v1/namespaces/db/tables/conflict', '/v1/namespaces/db/properties']) {
        const err = await rawRequest(proxy.url + path, { method: 'POST', body: '{"updates":[{"action":"set-properties","updates":{}}]}' })
        t.equal(err.status, 409)
        t.equal(err.headers['x-upstream'], 'yes')
        t.same(JSON.parse(err.body.toString()).error.type, 'CommitFailedException', 'upstream errors relayed as they came')
      }
    })

    t.test('/v1/config: overrides.uri never reaches a client', async (t) => {
      const up = await startRecordingUpstream(t, jsonResponder(200, {
        defaults: { uri: 'http://internal-catalog:8181', 'write.format': 'parquet' },
        overrides: { uri: 'http://internal-catalog:8181', prefix: 'wh-prefix' },
        endpoints: ['GET /v1/{prefix}/namespaces'],
        'idempotency-key-lifetime': 'PT30M'
      }, { etag: '"cfg"' }))
      const plain = await startProxy(t, { upstream: up.url })
      const res = await rawRequest(`${plain.url}/v1/config?warehouse=my+wh`, { headers: { 'accept-encoding': 'gzip' } })
      t.equal(res.status, 200)
      t.same(JSON.parse(res.body.toString()), {
        defaults: { 'write.format': 'parquet' },
        overrides: { prefix: 'wh-prefix' },
        endpoints: ['GET /v1/{prefix}/namespaces'],
        'idempotency-key-lifetime': 'PT30M'
      })
      t.equal(up.requests[0]?.url, '/v1/config?warehouse=my+wh')
      t.equal(up.requests[0]?.headers['accept-encoding'], 'identity')
      t.notOk(res.headers.etag, 'the upstream ETag described another body')

      const pub = await startProxy(t, { upstream: up.url, 'public-url': 'https://iceguard.example.com' })
      const rewritten = JSON.parse((await rawRequest(`${pub.url}/v1/config`)).body.toString())
      t.equal(rewritten.overrides.uri, 'https://iceguard.example.com')
      t.equal(rewritten.defaults.uri, 'https://iceguard.example.com')

      // iceberg-js follows only the prefix; it must keep talking to the proxy.
      up.respond((req, res) => {
        if (req.url.startsWith('/v1/config')) jsonResponder(200, { defaults: {}, overrides: { uri: 'http://127.0.0.1:1', prefix: 'wh-prefix' } })(req, res)
        else jsonResponder(200, { namespaces: [['x']] })(req, res)
      })
      const client = new IcebergRestCatalog({ baseUrl: plain.url, warehouse: 'w' })
      t.same((await client.listNamespaces()).namespaces, [{ namespace: ['x'] }])
      t.equal(up.requests.at(-1)?.url, '/v1/wh-prefix/namespaces')
    })

    t.test('gated write bodies are bounded by --body-limit (413 ErrorModel, nothing forwarded)', async (t) => {
      const up = await startRecordingUpstream(t)
      const proxy = await startProxy(t, { upstream: up.url, 'body-limit': '1KiB' })
      const body = JSON.stringify({ updates: [{ action: 'add-snapshot', pad: 'x'.repeat(2000) }] })
      for (const path of ['/v1/namespaces/db/tables/t', '/v1/namespaces/db/tables']) {
        const res = await rawRequest(proxy.url + path, { method: 'POST', body })
        t.equal(res.status, 413)
        t.same(JSON.parse(res.body.toString()).error.code, 413)
        t.match(JSON.parse(res.body.toString()).error.message, /1024-byte limit/)
      }
      t.equal(up.requests.length, 0)
    })

    t.test('app.inject reaches the same routes (for tests that do not listen)', async (t) => {
      const up = await startRecordingUpstream(t)
      const proxy = await startProxy(t, { upstream: up.url })
      const get = await proxy.app.inject({ method: 'GET', url: '/v1/namespaces/a%1Fb' })
      t.equal(get.statusCode, 200)
      const post = await proxy.app.inject({ method: 'POST', url: '/v1/namespaces/db/tables/t', payload: '{"updates":[{"action":"add-snapshot"}]}' })
      t.equal(post.statusCode, 200)
      t.same(up.requests.map((r) => [r.method, r.url, r.body.toString()]), [
        ['GET', '/v1/namespaces/a%1Fb', ''],
        ['POST', '/v1/namespaces/db/tables/t', '{"updates":[{"action":"add-snapshot"}]}']
      ])
      const health = await proxy.app.inject({ method: 'GET', url: '/healthz' })
      t.same(health.json(), { status: 'ok' })
      const missing = await proxy.app.inject({ method: 'GET', url: '/nowhere' })
      t.same(missing.json(), { error: { message: 'No route for GET /nowhere', type: 'NotFoundException', code: 404 } })
    })
  })

  t.test('upstream failures', async (t) => {
    t.test('unreachable upstream: 503 ServiceUnavailableException with Retry-After, nothing hangs', async (t) => {
      const port = await closedPort()
      const proxy = await startProxy(t, { upstream: `http://127.0.0.1:${port}`, 'upstream-connect-timeout': '2000', 'retry-after': '2' })
      for (const [method, path, body] of [
        ['GET', '/v1/namespaces/db/tables/t', undefined],
        ['POST', '/v1/namespaces/db/tables/t', '{"updates":[{"action":"add-snapshot"}]}'],
        ['POST', '/v1/namespaces', '{"namespace":["x"]}'],
        ['GET', '/v1/config', undefined]
      ] as const) {
        const res = await rawRequest(proxy.url + path, { method, body })
        t.equal(res.status, 503, `${method} ${path}`)
        t.equal(res.headers['retry-after'], '2')
        t.match(res.headers['content-type'], /application\/json/)
        const err = JSON.parse(res.body.toString()).error
        t.equal(err.type, 'ServiceUnavailableException')
        t.equal(err.code, 503)
        t.match(err.message, /not forwarded/)
      }
    })

    t.test('no answer in time: 504, CommitStateUnknownException for commits', async (t) => {
      const up = await startRecordingUpstream(t, () => { /* never answers */ })
      const proxy = await startProxy(t, { upstream: up.url, 'upstream-headers-timeout': '200' })
      const read = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`)
      t.equal(read.status, 504)
      t.equal(JSON.parse(read.body.toString()).error.type, 'GatewayTimeoutException')
      const expected = {
        message: 'The upstream catalog did not answer the forwarded commit in time; the commit state is unknown',
        type: 'CommitStateUnknownException',
        code: 504
      }
      const body = '{"updates":[{"action":"add-snapshot"}]}'
      const streamed = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`, { method: 'POST', body })
      t.equal(streamed.status, 504)
      t.same(JSON.parse(streamed.body.toString()).error, expected)
      // The buffered path (forwardBuffered), as Fastify routes use it.
      const buffered = await proxy.app.inject({ method: 'POST', url: '/v1/namespaces/db/tables/t', payload: body })
      t.equal(buffered.statusCode, 504)
      t.same(buffered.json().error, expected)
    })

    t.test('connection dropped after the request left: 502, and a POST is never retried', async (t) => {
      const up = await startRecordingUpstream(t, (_req, res) => { res.socket?.destroy() })
      const proxy = await startProxy(t, { upstream: up.url })
      const body = '{"updates":[{"action":"add-snapshot"}]}'
      const streamed = await rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`, { method: 'POST', body })
      t.equal(streamed.status, 502)
      t.equal(JSON.parse(streamed.body.toString()).error.type, 'CommitStateUnknownException')
      t.equal(up.requests.length, 1, 'sent once')
      const buffered = await proxy.app.inject({ method: 'POST', url: '/v1/namespaces/db/tables/t', payload: body })
      t.equal(buffered.statusCode, 502)
      t.equal(buffered.json().error.type, 'CommitStateUnknownException')
      t.equal(up.requests.length, 2, 'sent once')
      const read = await rawRequest(`${proxy.url}/v1/namespaces`)
      t.equal(read.status, 502)
      t.equal(JSON.parse(read.body.toString()).error.type, 'BadGatewayException')
    })

    t.test('upstream dies mid-response: the client connection is cut, never padded', async (t) => {
      const up = await startRecordingUpstream(t, (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
        res.write('{"metadata":')
        setTimeout(() => res.socket?.destroy(), 20)
      })
      const proxy = await startProxy(t, { upstream: up.url })
      await t.rejects(rawRequest(`${proxy.url}/v1/namespaces/db/tables/t`), 'the client sees an aborted response')
    })
  })
})
