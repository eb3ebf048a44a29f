/**
 * The transport matrix. A suite that calls `onEveryTransport(t, import.meta.url)` runs as usual on
 * the fast lane, and again in child processes on the other transports:
 *
 * - `fast lane`: the default server, every connection fresh;
 * - `config first`: the fast lane, with every client connection beginning with `GET /v1/config`
 *   as PyIceberg's session and iceberg-js's fetch begin theirs, then carrying the test's requests;
 * - `node:http`: `--fast-lane off`, every request through node:http and Fastify.
 *
 * `startProxy` (proxy.ts) reads the transport from the environment. The `config first` opener
 * carries `x-iceguard-test: config-first`; the test upstreams (recording-upstream.ts,
 * fault-upstream.ts, catalog.ts) answer it and leave it out of what they record, so what a test
 * asserts at the upstream is its own requests, on every transport.
 */
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'

export type Transport = 'fast lane' | 'config first' | 'node:http'

export const TRANSPORTS: readonly Transport[] = ['fast lane', 'config first', 'node:http']

const VARIABLE = 'ICEGUARD_TEST_TRANSPORT'

/** The transport this process tests. */
export const TRANSPORT: Transport = (TRANSPORTS as readonly string[]).includes(process.env[VARIABLE] ?? '')
  ? process.env[VARIABLE] as Transport
  : 'fast lane'

export const OPENER_HEADER = 'x-iceguard-test'

/** Whether a request is the `config first` opener (never one of the test's own). */
export function isOpener (headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[OPENER_HEADER] === 'config-first'
}

/**
 * Runs the suite in `file` again on every other transport, each in a child process. The children
 * run side by side (a process each, sharing nothing), then this process runs the suite itself: a
 * suite that mostly waits (on a stall it means to trip, say) takes the time of two runs, not three.
 */
export function onEveryTransport (t: Test, file: string): void {
  if (process.env[VARIABLE] !== undefined) return
  const others = TRANSPORTS.filter(transport => transport !== TRANSPORT)
  // tap starts buffered subtests in parallel up to `t.jobs` as they are added; the suite's own
  // tests, added after `jobs` is restored, run one at a time once the children are done.
  const jobs = t.jobs
  t.jobs = others.length
  for (const transport of others) {
    // The transport also follows the file as an argument: tap names a process's `t.testdir()`
    // folders after its script and arguments, so the children never share one.
    t.spawn(process.execPath, [...process.execArgv, fileURLToPath(file), transport], { env: { ...process.env, [VARIABLE]: transport } }, `on ${transport}`)
  }
  t.jobs = jobs
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
