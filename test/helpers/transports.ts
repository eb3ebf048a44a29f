/**
 * The transport matrix. A suite written as `onEveryTransport(t, t => { ...tests... })` runs its
 * tests once on each transport:
 *
 * - `fast lane`: the default server, every connection fresh;
 * - `config first`: the fast lane, with every client connection beginning with `GET /v1/config`
 *   as PyIceberg's session and iceberg-js's fetch begin theirs, then carrying the test's requests;
 * - `node:http`: `--fast-lane off`, every request through node:http and Fastify.
 *
 * `startProxy` (proxy.ts) asks `transportOf(t)` which transport the test it is given belongs to.
 * The `config first` opener carries `x-iceguard-test: config-first`; the test upstreams
 * (recording-upstream.ts, fault-upstream.ts, catalog.ts) answer it and leave it out of what they
 * record, so what a test asserts at the upstream is its own requests, on every transport.
 * `ICEGUARD_TEST_TRANSPORT=<transport>` runs one transport alone, to chase a failure.
 */
import net from 'node:net'
import type { Test } from 'tap'

export type Transport = 'fast lane' | 'config first' | 'node:http'

export const TRANSPORTS: readonly Transport[] = ['fast lane', 'config first', 'node:http']

const VARIABLE = 'ICEGUARD_TEST_TRANSPORT'

export const OPENER_HEADER = 'x-iceguard-test'

/** Whether a request is the `config first` opener (never one of the test's own). */
export function isOpener (headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[OPENER_HEADER] === 'config-first'
}

/** The test of each transport's run; a suite's tests are its descendants. */
const runs = new WeakMap<object, Transport>()
/** Tests that hold a matrix: a proxy started beneath one but outside every run is a mistake. */
const matrices = new WeakSet<object>()

/**
 * The transports a suite runs on: all of them, or the one `ICEGUARD_TEST_TRANSPORT` names.
 * An unknown name is an error rather than a silent run on nothing.
 */
function chosenTransports (env: NodeJS.ProcessEnv): readonly Transport[] {
  const only = env[VARIABLE]
  if (only === undefined || only === '') return TRANSPORTS
  if (!(TRANSPORTS as readonly string[]).includes(only)) {
    throw new Error(`${VARIABLE}=${only}: expected one of ${TRANSPORTS.join(', ')}`)
  }
  return [only as Transport]
}

/**
 * Runs `suite` once per transport, in this process, the runs side by side: a suite that mostly
 * waits (on a stall it means to trip, say) takes the time of one run, not three. One process
 * instead of three saves what a test process costs to start (Node, tap, the TypeScript loader and
 * iceguard's modules: 2 to 3 CPU-seconds, docs/performance.md). Tests that do not go through
 * iceguard's transports (pure functions, a spawned server) belong outside `suite`: they run once.
 */
export function onEveryTransport (t: Test, suite: (t: Test) => void, env: NodeJS.ProcessEnv = process.env): void {
  const transports = chosenTransports(env)
  matrices.add(t)
  t.test('on every transport', async t => {
    t.jobs = transports.length
    for (const transport of transports) {
      t.test(`on ${transport}`, async t => {
        runs.set(t, transport)
        suite(t)
      })
    }
  })
}

/**
 * The transport `t` tests: that of the transport run it belongs to, or the fast lane for a test
 * outside any matrix. A test of a matrix suite outside its runs has no transport: an error, so a
 * helper that captured the file's top-level `t` cannot quietly test the fast lane three times.
 */
export function transportOf (t: Test): Transport {
  for (let at: Test | undefined = t; at !== undefined; at = (at as { parent?: Test }).parent) {
    const transport = runs.get(at)
    if (transport !== undefined) return transport
    if (matrices.has(at)) throw new Error(`${t.fullname}: a proxy started outside onEveryTransport's runs`)
  }
  return 'fast lane'
}

/**
 * A relay on 127.0.0.1:0 in front of `target`: each client connection whose first request is an
 * Iceberg call gets a connection to iceguard that has carried `GET /v1/config` first; then bytes
 * flow both ways as they are, half-closes included.
 */
export async function startConfigFirstRelay (t: Test, target: string): Promise<string> {
  const port = Number(new URL(target).port)
  const sockets = new Set<net.Socket>()
  const connect = (): net.Socket => {
    const up = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    sockets.add(up)
    up.on('close', () => sockets.delete(up))
    return up
  }
  const relay = (client: net.Socket, up: net.Socket): void => {
    up.pipe(client)
    client.pipe(up)
    // A close on either side closes the other once what was relayed is written: a client reads
    // every byte iceguard sent before it closed, reset or not, as it would on a direct connection.
    up.on('error', () => {})
    client.on('error', () => up.destroy())
    up.on('close', () => client.destroySoon())
    client.on('close', () => up.destroy())
    client.resume()
  }
  const opened = (client: net.Socket): void => {
    const up = connect()
    up.write(`GET /v1/config HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${OPENER_HEADER}: config-first\r\n\r\n`)
    let head = Buffer.alloc(0)
    const onOpenerData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end === -1) return
      const text = head.toString('latin1', 0, end)
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? 0)
      if (head.length < end + 4 + length) return
      up.removeListener('data', onOpenerData)
      up.removeListener('error', onOpenerError)
      if (/\r\nconnection: *close/i.test(text)) {
        // iceguard closes this connection after its answer (an unreachable upstream): a client
        // opens a new one, and so does the relay.
        up.destroy()
        relay(client, connect())
        return
      }
      relay(client, up)
    }
    const onOpenerError = (): void => { client.destroy() }
    up.on('data', onOpenerData)
    up.on('error', onOpenerError)
  }
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    // Iceberg clients open their connections with `GET /v1/config`; a connection whose first
    // request is iceguard's own (admin, docs, health) is relayed as it is.
    client.once('data', (first: Buffer) => {
      client.pause()
      client.unshift(first)
      if (/^[A-Z]+ \/v1\//i.test(first.toString('latin1', 0, 64))) opened(client)
      else relay(client, connect())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy()
    server.close(() => resolve())
  }))
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
}
