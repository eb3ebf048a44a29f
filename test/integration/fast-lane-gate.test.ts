/**
 * Schema commits judged inside the fast lane (src/edge/fast-lane/client-connection.ts `gate`,
 * pool-client.ts): on raw kept-alive connections against the embedded catalog, the gate's
 * answers come in order with pipelined requests, nothing refused reaches the catalog, the
 * connection stays with the fast lane, and the pooled exchanges read every framing an upstream
 * may use. Transport faults on this path are covered by test/integration/faults.test.ts, which runs the same
 * server.
 */
import net from 'node:net'
import http from 'node:http'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import { createPoolClient } from '../../src/upstream/lane/pool-client.js'
import { UpstreamPool } from '../../src/upstream/lane/upstream-pool.js'
import { cloneSchema, clientShapes, createFixtureTable, fieldByPath, loadMeta, BIG_ID, type Meta } from '../helpers/gate-fixtures.js'
import { loggerOptions } from '../../src/main/app.js'
import { startCatalog, startProxy, type RunningCatalog } from '../helpers/index.js'

interface Answer { status: number, head: string, body: string }

/** Writes `data` on one connection; resolves once `count` answers (Content-Length framed) are complete. */
function pipeline (port: number, data: string, count: number): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(data))
    let raw = ''
    const parse = (): Answer[] | undefined => {
      const out: Answer[] = []
      let rest = raw
      while (out.length < count) {
        const end = rest.indexOf('\r\n\r\n')
        if (end === -1) return undefined
        const head = rest.slice(0, end)
        const len = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? NaN)
        if (Number.isNaN(len)) throw new Error(`answer without Content-Length: ${head}`)
        if (rest.length < end + 4 + len) return undefined
        out.push({ status: Number(head.slice(9, 12)), head, body: rest.slice(end + 4, end + 4 + len) })
        rest = rest.slice(end + 4 + len)
      }
      return out
    }
    sock.on('data', (c: Buffer) => {
      raw += c.toString('utf8')
      try {
        const done = parse()
        if (done !== undefined) {
          sock.destroy()
          resolve(done)
        }
      } catch (err) {
        sock.destroy()
        reject(err)
      }
    })
    sock.on('error', reject)
    sock.on('close', () => reject(new Error(`connection closed after ${raw.length} bytes: ${raw.slice(0, 300)}`)))
  })
}

function post (path: string, body: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`
}

const TABLE = '/v1/namespaces/db/tables/t'

/** The embedded catalog with `db.t` (the fixture table), and its metadata. */
async function catalogWithTable (t: Test): Promise<{ catalog: RunningCatalog, meta: Meta }> {
  const catalog = await startCatalog(t)
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 't', 2)
  return { catalog, meta: await loadMeta(catalog.url, 'db', 't') }
}

/** A java-shaped commit that narrows `id` (long) to int: refused by TYPE_PROMOTION_VALID. */
function narrowingCommit (meta: Meta): object {
  const narrowed = cloneSchema(meta)
  fieldByPath(narrowed, 'id').type = 'int'
  return clientShapes.java(meta, narrowed, 'db', 't') as object
}

t.test('schema commits are judged in the fast lane: in order, on one kept-alive connection, nothing refused forwarded', async t => {
  const { catalog, meta } = await catalogWithTable(t)
  const lines: string[] = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line)
      cb()
    }
  })
  const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec', app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream } } })
  const port = Number(new URL(proxy.url).port)

  // Refused: `id` (long) narrowed to int. Allowed: an optional column added.
  const refused = JSON.stringify(narrowingCommit(meta))
  const added = cloneSchema(meta)
  added.fields.push({ id: meta['last-column-id'] + 1, name: 'note', required: false, type: 'string' })
  const allowed = JSON.stringify(clientShapes.curl(meta, added, 'db', 't'))
  const dataCommit = JSON.stringify({ requirements: [], updates: [{ action: 'set-properties', updates: { owner: 'lane' } }] })

  catalog.clearRequests()
  const got = await pipeline(port, post(TABLE, refused) + post(TABLE, dataCommit) + post(TABLE, allowed, 'authorization: Bearer lane-secret\r\n'), 3)
  t.same(got.map(a => a.status), [400, 200, 200], 'three answers, in the order asked')

  const refusal = JSON.parse(got[0]?.body ?? '{}') as { error: { code: number, type: string, message: string } }
  t.equal(refusal.error.code, 400, 'the refusal is an ErrorModel whose code is the status')
  t.equal(refusal.error.type, 'IllegalArgumentException')
  t.match(refusal.error.message, /TYPE_PROMOTION_VALID|long -> int/, 'naming what was wrong')
  t.match(got[0]?.head ?? '', /\r\ncontent-type: application\/json; charset=utf-8/i, 'JSON, as Fastify would send it')
  t.match(got[0]?.head ?? '', /\r\nconnection: keep-alive/i, 'a refusal keeps the connection')
  t.match(got[0]?.head ?? '', /\r\ndate: /i)

  const commits = catalog.requests.filter(r => r.method === 'POST')
  t.equal(commits.length, 2, 'the catalog got the data commit and the allowed schema commit, not the refused one')
  t.equal(commits[0]?.body.toString(), dataCommit, 'the data commit byte for byte')
  const forwarded = JSON.parse(commits[1]?.body.toString() ?? '{}') as { requirements: Array<{ type: string }>, updates: unknown[] }
  t.ok(forwarded.requirements.some(r => r.type === 'assert-current-schema-id'), 'the allowed commit carries the requirement the gate added')
  t.same(forwarded.updates, JSON.parse(allowed).updates, 'and its updates unchanged')
  t.equal(commits[1]?.headers.authorization, 'Bearer lane-secret', 'the caller\'s credentials travel with the commit')
  const loads = catalog.requests.filter(r => r.method === 'GET')
  t.ok(loads.length >= 2 && loads.every(r => r.url === `${TABLE}?snapshots=refs`), 'each schema commit loaded its base with snapshots=refs')
  t.equal(loads.at(-1)?.headers.authorization, 'Bearer lane-secret', 'the base load carries the caller\'s credentials')

  const committed = JSON.parse(got[2]?.body ?? '{}') as { metadata: { schemas: unknown[] } }
  t.equal(committed.metadata.schemas.length, meta.schemas.length + 1, 'the catalog\'s answer is relayed whole')

  // The gate's audit line for each schema commit, with the lane's request ids; the caller is named
  // by a fingerprint, and the token is in no log line.
  const audit = lines.map(l => JSON.parse(l) as { component?: string, audit?: Record<string, unknown> })
    .filter(l => l.component === 'audit').map(l => l.audit ?? {})
  t.same(audit.map(a => a.verdict), ['deny', 'allow'], 'one audit line per schema commit judged')
  t.ok(audit.every(a => typeof a.requestId === 'string' && /^lane-[0-9a-z]+$/.test(a.requestId)), 'with the fast lane\'s request ids')
  t.not(audit[0]?.requestId, audit[1]?.requestId)
  t.notOk(lines.some(l => l.includes('lane-secret')), 'the bearer token reaches no log line')

  // Counted by the fast lane under its operation label: the connection was never handed over.
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
  t.match(metrics, /iceguard_http_requests_total\{method="POST",route="iceberg:update-table",status="400"\} 1/, 'the refusal was answered in the fast lane')
  t.match(metrics, /iceguard_http_requests_total\{method="POST",route="iceberg:update-table",status="200"\} 2/)
  t.notMatch(metrics, /route="\/v1\/\*"/, 'Fastify\'s catch-all route saw none of them')
})

t.test('a transaction that needs the gate is judged in the fast lane too', async t => {
  const { catalog, meta } = await catalogWithTable(t)
  const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec' })
  const change = { identifier: { namespace: ['db'], name: 't' }, ...narrowingCommit(meta) }
  catalog.clearRequests()
  const [answer] = await pipeline(Number(new URL(proxy.url).port), post('/v1/transactions/commit', JSON.stringify({ 'table-changes': [change] })), 1)
  t.equal(answer?.status, 400)
  t.equal(catalog.requests.filter(r => r.method === 'POST').length, 0, 'nothing reached the catalog')
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
  t.match(metrics, /route="iceberg:transaction",status="400"\} 1/)
})

t.test('pooled exchanges: every framing read whole, long ids untouched, a GET resent once and a POST never', async t => {
  let nth = 0
  const bigBody = `{"id":${BIG_ID},"pad":"${'x'.repeat(150_000)}"}`
  const server = http.createServer((req, res) => {
    nth++
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString()
      if (req.url === '/base/chunked') {
        // No Content-Length: node:http frames it chunked, in several chunks.
        res.writeHead(200, { 'content-type': 'application/json', etag: '"e1"' })
        res.write(bigBody.slice(0, 70_000))
        setTimeout(() => res.end(bigBody.slice(70_000)), 5)
      } else if (req.url === '/base/close') {
        res.writeHead(200, { 'content-type': 'application/json', connection: 'close' })
        res.socket?.write(`HTTP/1.1 201 Created\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${body}`)
        res.socket?.end()
      } else if (req.url === '/base/304') {
        res.writeHead(304, { etag: '"e1"' })
        res.end()
      } else if (req.url === '/base/reset') {
        req.socket.destroy()
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(bigBody)) })
        res.end(bigBody)
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const port = (server.address() as net.AddressInfo).port
  // Nothing here is about timeouts: minute-long ones, so a loaded machine cannot turn an answer into one.
  const pool = new UpstreamPool({ host: '127.0.0.1', port, connections: 2, connectTimeout: 60_000, keepAliveTimeout: 5000 })
  t.teardown(() => pool.close())
  const client = createPoolClient({ pool, basePath: '/base', upstreamHost: `127.0.0.1:${port}`, headersTimeout: 60_000, bodyTimeout: 60_000, retryAfter: 2, maxResponseBytes: 1 << 20 })

  const length = await client.request({ method: 'GET', path: '/length', headers: { accept: 'application/json' } })
  t.equal(length.statusCode, 200)
  t.equal(length.body.toString(), bigBody, 'a Content-Length answer larger than one read, whole; the long id as sent')
  t.equal(length.headers['content-type'], 'application/json')

  const chunked = await client.request({ method: 'GET', path: '/chunked' })
  t.equal(chunked.body.toString(), bigBody, 'a chunked answer, de-chunked')
  t.equal(chunked.headers.etag, '"e1"')
  t.equal(chunked.headers['transfer-encoding'], undefined, 'hop-by-hop fields are not part of the answer')

  const notModified = await client.request({ method: 'GET', path: '/304', headers: { 'if-none-match': '"e1"' } })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body.length, 0)

  const closeDelimited = await client.request({ method: 'POST', path: '/close', body: Buffer.from('echo'), commit: true })
  t.equal(closeDelimited.statusCode, 201)
  t.equal(closeDelimited.body.toString(), 'echo', 'an answer read until the upstream closed, with the body the upstream got')

  const failure = async (p: Promise<unknown>): Promise<Record<string, unknown>> => {
    try {
      await p
    } catch (err) {
      return err as Record<string, unknown>
    }
    throw new Error('expected the request to fail')
  }
  const before = nth
  t.match(await failure(client.request({ method: 'GET', path: '/reset' })), { statusCode: 502, sent: true }, 'a GET whose socket dies is a bad gateway…')
  t.equal(nth - before, 2, '…after one resend')
  const beforePost = nth
  t.match(await failure(client.request({ method: 'POST', path: '/reset', body: Buffer.from('{}'), commit: true })), { statusCode: 502, code: 'UPSTREAM_BAD_RESPONSE_COMMIT' },
    'a POST whose socket dies: commit state unknown')
  t.equal(nth - beforePost, 1, 'a POST is never resent')

  const small = createPoolClient({ pool, basePath: '/base', upstreamHost: 'x', headersTimeout: 60_000, bodyTimeout: 60_000, retryAfter: 2, maxResponseBytes: 10_000 })
  t.match(await failure(small.request({ method: 'GET', path: '/length' })), { statusCode: 502, message: /ICEGUARD_RESPONSE_TOO_LARGE/ }, 'an answer above the limit is abandoned, not buffered')

  const closedPool = new UpstreamPool({ host: '127.0.0.1', port, connections: 1, connectTimeout: 60_000, keepAliveTimeout: 5000 })
  closedPool.close()
  const unreachable = createPoolClient({ pool: closedPool, basePath: '', upstreamHost: 'x', headersTimeout: 60_000, bodyTimeout: 60_000, retryAfter: 7, maxResponseBytes: 1000 })
  t.match(await failure(unreachable.request({ method: 'POST', path: '/x', body: Buffer.from('{}'), commit: true })),
    { statusCode: 503, sent: false, headers: { 'retry-after': '7' } }, 'nothing sent: 503 with Retry-After')
})
