/**
 * Upstream faults, injected one at a time against a controllable upstream, on the three paths a
 * call can take: a pass-through read (loadTable), a fast-path data commit (scanned, never parsed)
 * and a gated schema commit (base load, then the commit). For each: the answer Iceberg clients
 * expect (503 + Retry-After when nothing was forwarded, 502/504 CommitStateUnknownException once a
 * commit left, the upstream's own 4xx/5xx relayed), within the configured timeouts, a commit sent
 * at most once, and no connection left open once the proxy is closed.
 */
import http from 'node:http'
import net from 'node:net'
import t, { type Test } from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import { startProxy, type RunningProxy } from '../helpers/index.js'
import { startCatalog } from '../helpers/catalog.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, type Meta } from '../helpers/gate-fixtures.js'
import { refusedUrl, startFaultUpstream, type Fault, type FaultUpstream } from '../helpers/fault-upstream.js'
import { onEveryTransport, transportOf, type Transport } from '../helpers/transports.js'

/**
 * Timeouts are short only where a fault is meant to trip them (a stall), and there the answers that
 * must arrive in time come from memory, so slowness of a loaded machine cannot turn a pass into a
 * timeout. Every other fault runs with the default (minute-long) timeouts: the assertions are about
 * answers, never about time.
 */
const RETRY_AFTER = { 'retry-after': '3' } as const
const STALL_TIMEOUTS = { ...RETRY_AFTER, 'upstream-headers-timeout': '2000', 'upstream-body-timeout': '2000' } as const
/** Refused or unresolvable upstreams: either way nothing is forwarded, so a short connect bound only saves time. */
const UNREACHABLE_TIMEOUTS = { ...RETRY_AFTER, 'upstream-connect-timeout': '500' } as const

const TABLE_PATH = '/v1/namespaces/db/tables/t'
const DATA_COMMIT = JSON.stringify({
  requirements: [],
  updates: [{ action: 'set-properties', updates: { owner: 'faults' } }]
})

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
  /** The connection was cut before a complete answer arrived. */
  readonly cut: boolean
}

/**
 * One exchange on its own connection. A cut connection is reported, not thrown; a proxy that
 * goes silent for a minute fails the test instead of hanging it.
 */
function call (url: string, opts: { method?: string, body?: string, headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.body !== undefined) headers['content-type'] ??= 'application/json'
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), cut: false }))
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), cut: true }))
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), cut: true }))
    })
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer from the proxy for ${opts.method ?? 'GET'} ${url}`)))
    req.on('error', (err) => {
      if ((err as { code?: string }).code === 'ECONNRESET') resolve({ status: 0, headers: {}, body: Buffer.alloc(0), cut: true })
      else reject(err)
    })
    req.end(opts.body)
  })
}

function errorOf (a: Answer): { message: string, type: string, code: number } {
  return (JSON.parse(a.body.toString('utf8')) as { error: { message: string, type: string, code: number } }).error
}

/**
 * The ports of one transport run's servers (its catalog, fault upstreams and proxies): the three
 * runs share this process, so a run counts only the sockets to or from its own servers.
 */
const runPorts = new Map<Transport, Set<number>>()
function portsOf (t: Test): Set<number> {
  const transport = transportOf(t)
  let ports = runPorts.get(transport)
  if (ports === undefined) runPorts.set(transport, ports = new Set())
  return ports
}
const portOf = (url: string): number => Number(new URL(url).port)

/** TCP sockets open in this process to or from one of `ports` (server sockets and stdio excluded). */
function openTcpSockets (ports: ReadonlySet<number>): Set<net.Socket> {
  const handles = (process as unknown as { _getActiveHandles (): unknown[] })._getActiveHandles()
  return new Set(handles.filter((h): h is net.Socket => h instanceof net.Socket && typeof h.remotePort === 'number' && !h.destroyed &&
    (ports.has(h.remotePort) || (h.localPort !== undefined && ports.has(h.localPort)))))
}

function expectUnavailable (t: Test, a: Answer, what: string): void {
  t.equal(a.status, 503, `${what}: 503`)
  t.equal(a.headers['retry-after'], '3', `${what}: Retry-After as configured`)
  const e = errorOf(a)
  t.equal(e.code, 503, `${what}: code = status`)
  t.equal(e.type, 'ServiceUnavailableException', `${what}: ServiceUnavailableException`)
}

function expectUnknown (t: Test, a: Answer, status: 502 | 504, what: string): void {
  t.equal(a.status, status, `${what}: ${status}`)
  t.notOk(a.cut, `${what}: a complete ErrorModel, not a cut connection`)
  const e = errorOf(a)
  t.equal(e.code, status, `${what}: code = status`)
  t.equal(e.type, 'CommitStateUnknownException', `${what}: CommitStateUnknownException`)
  t.equal(a.headers['retry-after'], undefined, `${what}: no Retry-After (a client must not blindly resend a commit that may have landed)`)
}

interface World {
  readonly catalogUrl: string
  readonly meta: Meta
  readonly schemaCommit: string
  /** The table's loadTable answer, served from memory where a pass must beat a short timeout. */
  readonly loadAnswer: Fault
}

/** One embedded catalog with `db.t`, shared by every fault (each fault gets its own proxy). */
async function world (t: Test): Promise<World> {
  const catalog = await startCatalog(t)
  portsOf(t).add(portOf(catalog.url))
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 't', 2)
  const meta = await loadMeta(catalog.url, 'db', 't')
  const s = cloneSchema(meta)
  s.fields.push({ id: meta['last-column-id'] + 1, name: 'added', required: false, type: 'string' })
  return {
    catalogUrl: catalog.url,
    meta,
    schemaCommit: JSON.stringify(clientShapes.java(meta, s, 'db', 't')),
    loadAnswer: { kind: 'answer', status: 200, body: JSON.stringify({ 'metadata-location': 's3://x', metadata: meta }) }
  }
}

async function proxyOn (t: Test, upstream: string, flags: Record<string, string> = RETRY_AFTER): Promise<RunningProxy> {
  const proxy = await startProxy(t, { upstream, policy: 'builtin:spec', ...flags })
  for (const url of [upstream, proxy.url, proxy.direct]) portsOf(t).add(portOf(url))
  return proxy
}

/** Closes the proxy and checks that the fault upstream sees no connection left from it. */
async function closesClean (t: Test, proxy: RunningProxy, up: FaultUpstream): Promise<void> {
  await proxy.close()
  t.equal(await up.drained(), 0, 'no upstream connection left open after the proxy closed')
}

onEveryTransport(t, t => {
  t.test('upstream faults', async t => {
    const w = await world(t)
    const socketsBefore = openTcpSockets(portsOf(t))

    t.test('connection refused: 503 + Retry-After on every path, nothing hangs', async t => {
      const proxy = await proxyOn(t, await refusedUrl(), UNREACHABLE_TIMEOUTS)
      expectUnavailable(t, await call(proxy.url + TABLE_PATH), 'read')
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }), 'data commit')
      const gated = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      expectUnavailable(t, gated, 'schema commit')
      t.match(errorOf(gated).message, /nothing was committed/)
    })

    t.test('DNS failure: 503 + Retry-After on every path', async t => {
      const proxy = await proxyOn(t, 'http://nonexistent.invalid:8181', UNREACHABLE_TIMEOUTS)
      expectUnavailable(t, await call(proxy.url + TABLE_PATH), 'read')
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }), 'data commit')
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 'schema commit')
    })

    t.test('headers timeout', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url, STALL_TIMEOUTS)
      up.use(() => ({ kind: 'stall-headers' }))
      // Three stalls at once, each on its own connection: a read, a data commit, and a schema commit
      // whose base load stalls.
      const [read, data, stalledLoad] = await Promise.all([
        call(proxy.url + TABLE_PATH),
        call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }),
        call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      ])
      t.equal(read.status, 504, 'read: 504')
      t.equal(errorOf(read).type, 'GatewayTimeoutException', 'read: a gateway timeout, not "commit state unknown"')
      t.equal(errorOf(read).code, 504)
      expectUnknown(t, data, 504, 'data commit')
      // The base load stalled: nothing was forwarded, so the answer is a definite, retryable 503.
      expectUnavailable(t, stalledLoad, 'schema commit, base load stalled')
      t.equal(up.count('GET'), 2, 'the timed-out read and base load were each sent once, never retried')
      t.equal(up.count('POST'), 1, 'the data commit was sent once; the schema commit never left')

      // The base load answers, the commit stalls: its fate is unknown.
      up.use(req => req.method === 'GET' ? w.loadAnswer : { kind: 'stall-headers' })
      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 504, 'schema commit')
      t.equal(up.count('POST'), 2, 'the schema commit was sent once')
      await closesClean(t, proxy, up)
    })

    t.test('body stall after the headers', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url, STALL_TIMEOUTS)
      const body = JSON.stringify({ 'metadata-location': 's3://x', metadata: w.meta })
      up.use(() => ({ kind: 'stall-body', body, sendBytes: 40 }))
      const [read, data, stalledLoad] = await Promise.all([
        call(proxy.url + TABLE_PATH),
        call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }),
        call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      ])
      t.equal(read.status, 200, 'read: the upstream\'s status was already relayed')
      t.ok(read.cut, 'read: the connection is cut, so a partial body is never taken for a whole one')
      t.ok(read.body.length < Buffer.byteLength(body))
      expectUnknown(t, data, 504, 'data commit')
      expectUnavailable(t, stalledLoad, 'schema commit, base load stalled')
      t.equal(up.count('POST'), 1, 'the data commit was sent once; the schema commit never left')

      up.use(req => req.method === 'GET' ? w.loadAnswer : { kind: 'stall-body', body, sendBytes: 40 })
      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 504, 'schema commit')
      t.equal(up.count('POST'), 2, 'each commit was sent once')
      await closesClean(t, proxy, up)
    })

    t.test('connection reset before the answer', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url)
      up.use(() => ({ kind: 'reset' }))
      const read = await call(proxy.url + TABLE_PATH)
      t.equal(read.status, 502, 'read: 502')
      t.equal(errorOf(read).type, 'BadGatewayException')
      t.equal(up.count('GET'), 2, 'a read is resent once on a dead connection (safe: a GET changes nothing)')

      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }), 502, 'data commit')
      t.equal(up.count('POST'), 1, 'a data commit is never resent')

      up.use(req => req.method === 'GET' ? { kind: 'pass' } : { kind: 'reset' })
      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 502, 'schema commit')
      t.equal(up.count('POST'), 2, 'a schema commit is never resent')
      await closesClean(t, proxy, up)
    })

    t.test('the gate\'s base load is retried once on a dead connection, never more, and the commit never', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url, STALL_TIMEOUTS)
      // First base load dies before an answer; the resend succeeds; the commit goes through.
      up.use((req, nth) => req.method === 'GET' && nth === 1 ? { kind: 'reset' } : w.loadAnswer)
      const once = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      t.equal(once.status, 200, 'one dead connection on the base load is absorbed')
      t.equal(up.count('GET'), 2, 'the base load was sent twice')
      t.equal(up.count('POST'), 1, 'the commit once')

      // Every base load dies: after one resend the gate gives up with a definite 503.
      up.use(req => req.method === 'GET' ? { kind: 'reset' } : { kind: 'pass' })
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 'base load reset twice')
      t.equal(up.count('GET'), 4, 'at most one resend')
      t.equal(up.count('POST'), 1, 'nothing forwarded')

      // A base load that times out is not resent (the upstream may be overloaded): 503 at once.
      up.use(req => req.method === 'GET' ? { kind: 'stall-headers' } : { kind: 'pass' })
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 'base load timed out')
      t.equal(up.count('GET'), 5, 'no resend after a timeout')
      t.equal(up.count('POST'), 1)
      await closesClean(t, proxy, up)
    })

    t.test('connection reset mid-answer', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url)
      const body = JSON.stringify({ 'metadata-location': 's3://x', metadata: w.meta })
      up.use(() => ({ kind: 'reset', body, sendBytes: 50 }))
      const read = await call(proxy.url + TABLE_PATH)
      t.ok(read.cut, 'read: the connection is cut')
      t.equal(up.count('GET'), 1, 'a read whose answer had started is not resent')

      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }), 502, 'data commit')
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 'schema commit, base load cut')
      up.use(req => req.method === 'GET' ? { kind: 'pass' } : { kind: 'reset', body, sendBytes: 50 })
      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 502, 'schema commit')
      t.equal(up.count('POST'), 2, 'each commit was sent once')
      await closesClean(t, proxy, up)
    })

    t.test('truncated body (Content-Length longer than what came)', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url)
      const body = JSON.stringify({ 'metadata-location': 's3://x', metadata: w.meta })
      up.use(() => ({ kind: 'truncate', body, sendBytes: 60 }))
      const read = await call(proxy.url + TABLE_PATH)
      t.ok(read.cut, 'read: the connection is cut, never padded or ended early as if complete')

      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT }), 502, 'data commit')
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 'schema commit, base load truncated')
      up.use(req => req.method === 'GET' ? { kind: 'pass' } : { kind: 'truncate', body, sendBytes: 60 })
      expectUnknown(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 502, 'schema commit')
      t.equal(up.count('POST'), 2, 'each commit was sent once')
      await closesClean(t, proxy, up)
    })

    t.test('upstream 4xx/5xx and non-JSON answers are relayed as they came', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url)
      const answers: Fault[] = [
        { kind: 'answer', status: 500, body: '{"error":{"message":"boom","type":"RuntimeException","code":500}}' },
        { kind: 'answer', status: 503, body: '{"error":{"message":"busy","type":"ServiceUnavailableException","code":503}}', headers: { 'retry-after': '7' } },
        { kind: 'answer', status: 409, body: '{"error":{"message":"stale","type":"CommitFailedException","code":409}}' },
        { kind: 'answer', status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } },
        { kind: 'answer', status: 200, body: 'not json at all', headers: { 'content-type': 'text/plain' } }
      ]
      for (const fault of answers) {
        if (fault.kind !== 'answer') continue
        const label = `${fault.status} ${String(fault.body).slice(0, 20)}`
        up.use(() => fault)
        const read = await call(proxy.url + TABLE_PATH)
        t.equal(read.status, fault.status, `read ${label}: status relayed`)
        t.equal(read.body.toString(), String(fault.body), `read ${label}: body relayed byte for byte`)
        const data = await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT })
        t.equal(data.status, fault.status, `data commit ${label}: status relayed`)
        t.equal(data.body.toString(), String(fault.body), `data commit ${label}: body relayed`)
        if (fault.headers?.['retry-after'] !== undefined) t.equal(data.headers['retry-after'], fault.headers['retry-after'], 'the upstream\'s Retry-After travels')
        up.use(req => req.method === 'GET' ? { kind: 'pass' } : fault)
        const gated = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
        t.equal(gated.status, fault.status, `schema commit ${label}: status relayed`)
        t.equal(gated.body.toString(), String(fault.body), `schema commit ${label}: body relayed`)
      }
      t.equal(up.count('POST'), answers.length * 2, 'no commit was resent after an error answer')

      // The base load answers with something the gate cannot judge: fail closed, nothing forwarded.
      for (const fault of [
        { kind: 'answer', status: 500, body: '{"error":{"message":"boom","type":"RuntimeException","code":500}}' },
        { kind: 'answer', status: 200, body: 'not json' },
        { kind: 'answer', status: 200, body: '{"metadata":{"format-version":2}}' }
      ] satisfies Fault[]) {
        up.use(req => req.method === 'GET' ? fault : { kind: 'pass' })
        const res = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
        expectUnavailable(t, res, `base load ${fault.status} ${fault.body.slice(0, 12)}`)
        t.match(errorOf(res).message, /base metadata unavailable/)
      }
      up.use(req => req.method === 'GET' ? { kind: 'answer', status: 404, body: '{"error":{"message":"no such table","type":"NoSuchTableException","code":404}}' } : { kind: 'pass' })
      const missing = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      t.equal(missing.status, 404, 'a 404 on the base load is the client\'s answer')
      t.equal(errorOf(missing).type, 'NoSuchTableException')
      t.equal(up.count('POST'), answers.length * 2, 'nothing forwarded after an unusable base load')
      await closesClean(t, proxy, up)
    })

    t.test('huge bodies are relayed whole', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url)
      const bytes = 24 * 1024 * 1024
      up.use(() => ({ kind: 'huge', bytes }))
      const read = await call(proxy.url + TABLE_PATH)
      t.equal(read.status, 200)
      t.notOk(read.cut)
      t.ok(read.body.length >= bytes, 'read: every byte arrived')
      t.equal(read.body.subarray(-7).toString(), '"end"]}', 'read: the last bytes are the upstream\'s')

      const data = await call(proxy.url + TABLE_PATH, { method: 'POST', body: DATA_COMMIT })
      t.equal(data.status, 200)
      t.equal(data.body.length, read.body.length, 'data commit: the whole answer')

      up.use(req => req.method === 'GET' ? { kind: 'pass' } : { kind: 'huge', bytes })
      const gated = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      t.equal(gated.status, 200)
      t.equal(gated.body.length, read.body.length, 'schema commit: the whole answer')

      // A large base load without metadata: judged unreadable, nothing forwarded. (Kept to 4 MiB:
      // the gate reads a base load whole on the event loop, so a bigger one only slows the test.)
      up.use(req => req.method === 'GET' ? { kind: 'huge', bytes: 4 * 1024 * 1024 } : { kind: 'pass' })
      expectUnavailable(t, await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit }), 'huge base load')
      t.equal(up.count('POST'), 2)
      await closesClean(t, proxy, up)
    })

    t.test('an upstream answer above --upstream-max-response is never buffered', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url, { ...RETRY_AFTER, 'upstream-max-response': '64KiB' })
      up.use(req => req.method === 'GET' ? { kind: 'huge', bytes: 1024 * 1024 } : { kind: 'pass' })
      // The gate reads the base load whole: an oversized one cannot be judged, which no retry
      // changes: a final 400 naming the setting, and nothing is forwarded.
      const refused = await call(proxy.url + TABLE_PATH, { method: 'POST', body: w.schemaCommit })
      t.equal(refused.status, 400, 'oversized base load: a final 400')
      t.equal(errorOf(refused).type, 'BadRequestException')
      t.match(errorOf(refused).message, /--upstream-max-response/, 'naming the setting to raise')
      t.equal(up.count('POST'), 0, 'nothing forwarded')
      // /v1/config is read whole too (to remove overrides.uri): a bad response, not a hang or a crash.
      const config = await call(proxy.url + '/v1/config')
      t.equal(config.status, 502, 'config: 502')
      t.equal(errorOf(config).type, 'BadGatewayException')
      // Pass-through reads are streamed and not limited.
      const read = await call(proxy.url + TABLE_PATH)
      t.equal(read.status, 200)
      t.ok(read.body.length >= 1024 * 1024, 'streamed reads are not capped')
      await closesClean(t, proxy, up)
    })

    /**
   * A read whose upstream answer stalls after a few bytes; the client takes the first bytes and
   * hangs up. The connection first carries `GET /v1/config`, as PyIceberg's session and
   * iceberg-js's do. Default (minute-long) timeouts: only the client's hang-up can close the
   * upstream connection within the wait, never a body timeout.
   */
    t.test('the client hanging up mid-read releases the upstream connection', async t => {
      const up = await startFaultUpstream(t, { target: w.catalogUrl })
      const proxy = await proxyOn(t, up.url)
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      t.teardown(() => agent.destroy())
      const config = await new Promise<number>((resolve, reject) => {
        http.get(proxy.url + '/v1/config', { agent }, res => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) }).on('error', reject)
      })
      t.equal(config, 200, 'the connection began with GET /v1/config')
      const body = JSON.stringify({ 'metadata-location': 's3://x', metadata: w.meta })
      up.use(() => ({ kind: 'stall-body', body, sendBytes: 10 }))
      await new Promise<void>((resolve) => {
        const req = http.get(proxy.url + TABLE_PATH, { agent }, (res) => {
          res.once('data', () => { req.destroy(); resolve() })
        })
        req.on('error', () => resolve())
      })
      const carried = up.seen.at(-1)!
      t.equal(carried.url, TABLE_PATH, 'the read reached the upstream')
      const until = Date.now() + 30_000
      while (!carried.connectionClosed() && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 10))
      t.ok(carried.connectionClosed(), 'the upstream connection that carried the read was closed with the client\'s')
      await closesClean(t, proxy, up)
    })

    t.test('after all of the above, no TCP socket of this run is left in this process', async t => {
      const until = Date.now() + 30_000
      const ports = portsOf(t)
      t.ok(ports.size > 1, `the run's servers are known (${ports.size} ports)`)
      const left = (): net.Socket[] => [...openTcpSockets(ports)].filter(s => !socketsBefore.has(s))
      while (left().length > 0 && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 20))
      t.same(left().map(s => `${s.localPort} -> ${s.remotePort}`), [], 'no socket opened since the faults began is still open')
    })
  })
})
