/**
 * A client that hangs up while its request waits for an upstream connection: the request is never
 * sent. On the node:http path a request waits in undici's queue when every upstream connection
 * (`--upstream-connections`) is busy; its client may leave meanwhile. Sending it once a connection
 * frees would reach the catalog for nobody (a commit nobody sees the answer to), and before this
 * was fixed the request, once under way, could wait for its gone client forever and hold
 * iceguard's close (seen on Node 24, docs/deployment.md).
 *
 * On the fast lane, iceguard's own routes and `/v1` answers never use this queue; the lane hands a
 * connection to node:http only for shapes it leaves to it (an HTTP/1.0 request is one), so both
 * ways in are exercised.
 */
import net from 'node:net'
import http, { type ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { startProxy, type RunningProxy } from '../helpers/proxy.js'
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/recording-upstream.js'

interface PoolStats { readonly pending: number, readonly queued: number, readonly running: number }
const statsOf = (proxy: RunningProxy): PoolStats => (proxy.app as unknown as { upstream: { pool: { stats: PoolStats } } }).upstream.pool.stats

/** Waits until `done()` holds, checking every 10 ms; fails the test (never hangs) after 20 s. */
async function until (t: Test, what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!await done()) {
    if (Date.now() > deadline) {
      t.fail(`timed out waiting until ${what}`)
      return
    }
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

async function connectionsOf (proxy: RunningProxy): Promise<number> {
  return await new Promise((resolve, reject) => proxy.app.server.getConnections((err, n) => err === null ? resolve(n) : reject(err)))
}

const SLOW = '/v1/namespaces/db/tables/slow'
const GONE = '/v1/namespaces/db/tables/gone'

async function world (t: Test, fastLane: 'on' | 'off'): Promise<{ up: RecordingUpstream, proxy: RunningProxy, release: () => void }> {
  let held: ServerResponse | undefined
  const up = await startRecordingUpstream(t, (req, res) => {
    if (req.url === SLOW) {
      held = res
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{}')
  })
  const proxy = await startProxy(t, { upstream: up.url, 'fast-lane': fastLane, 'upstream-connections': '1' })
  const release = (): void => {
    held?.writeHead(200, { 'content-type': 'application/json' })
    held?.end('{"slow":true}')
  }
  return { up, proxy, release }
}

for (const [fastLane, version] of [['off', '1.1'], ['on', '1.0']] as const) {
  t.test(`fast lane ${fastLane}, HTTP/${version}: a request whose client left while it waited for an upstream connection is never sent`, async t => {
    const { up, proxy, release } = await world(t, fastLane)
    const port = Number(new URL(proxy.direct).port)
    // A takes the only upstream connection and keeps it: the upstream holds its answer.
    const first = new Promise<number>((resolve, reject) => {
      http.get(`${proxy.direct}${SLOW}`, { agent: false }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) }).on('error', reject)
    })
    await until(t, 'the upstream holds the first request', () => up.requests.some(r => r.url === SLOW))
    // B waits for that connection, then hangs up.
    const b = net.connect(port, '127.0.0.1')
    b.on('error', () => {})
    b.write(`GET ${GONE} HTTP/${version}\r\nhost: x\r\n\r\n`)
    await until(t, 'the second request waits in the upstream queue', () => statsOf(proxy).pending + statsOf(proxy).queued >= 1)
    b.destroy()
    await until(t, 'iceguard saw the second client leave', async () => await connectionsOf(proxy) === 1)
    // The connection frees: the waiting request must not be sent now.
    release()
    t.equal(await first, 200, 'the first request is answered')
    await until(t, 'the upstream queue is empty', () => { const s = statsOf(proxy); return s.pending === 0 && s.queued === 0 && s.running === 0 })
    t.same(up.requests.map(r => r.url), [SLOW], 'the upstream got the first request only')
    // And iceguard closes: nothing waits for the gone client.
    await proxy.close()
    t.pass('iceguard closed')
  })
}
