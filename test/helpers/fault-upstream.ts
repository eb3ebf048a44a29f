/**
 * `startFaultUpstream(t, opts)`: a controllable upstream catalog for fault tests. Each request is
 * answered by the fault the test's chooser names: a canned answer (4xx/5xx, non-JSON), no answer
 * at all, headers then a stalled or truncated body, a reset before or during the answer, a huge
 * body, or `pass` — forwarded to a real catalog when one is given. It records every request and
 * counts open connections, so a test can check that the proxy left no socket behind.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { Responder } from './recording-upstream.js'
import net, { type AddressInfo, type Socket } from 'node:net'
import type { Test } from 'tap'
import { request } from 'undici'
import { isOpener } from './transports.js'

export type Fault =
  /** Forward to `target` (or answer `200 {}` without one). */
  | { readonly kind: 'pass' }
  /** A complete answer as given (status, body, headers). */
  | { readonly kind: 'answer', readonly status: number, readonly body: string | Buffer, readonly headers?: Record<string, string> }
  /** Read the request, never answer (the proxy's headers timeout must fire). */
  | { readonly kind: 'stall-headers' }
  /** Send headers and the first `sendBytes` of `body`, then fall silent (the body timeout must fire). */
  | { readonly kind: 'stall-body', readonly body: string, readonly sendBytes: number }
  /** Destroy the connection after `sendBytes` of the answer (0: before any header). */
  | { readonly kind: 'reset', readonly body?: string, readonly sendBytes?: number }
  /** Announce the full length of `body`, send `sendBytes` of it, then close cleanly. */
  | { readonly kind: 'truncate', readonly body: string, readonly sendBytes: number }
  /** A 200 JSON answer of about `bytes` bytes, written in chunks with back-pressure. */
  | { readonly kind: 'huge', readonly bytes: number }

export interface SeenRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
  /** Whether the connection this request came on has closed since. */
  connectionClosed (): boolean
}

export type FaultChooser = (req: SeenRequest, nth: number) => Fault

export interface FaultUpstream {
  readonly url: string
  readonly seen: SeenRequest[]
  /** Chooses the fault for each later request; `nth` counts requests with the same method, from 1. */
  use (chooser: FaultChooser): void
  /** Requests received with this method. */
  count (method: string): number
  /** TCP connections currently open from the proxy. */
  openConnections (): number
  /** Waits (bounded) until no connection is open; resolves with the count left. */
  drained (withinMs?: number): Promise<number>
  close (): Promise<void>
}

/** A URL on which nothing listens (connection refused). */
export async function refusedUrl (): Promise<string> {
  const srv = net.createServer()
  await new Promise<void>(resolve => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as AddressInfo
  await new Promise<void>(resolve => srv.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

/** A JSON document of at least `bytes` bytes: one object with a long array of short strings. */
export function hugeJson (bytes: number): Buffer {
  const item = '"0123456789abcdef0123456789abcdef",'
  const n = Math.ceil(bytes / item.length)
  return Buffer.from(`{"items":[${item.repeat(n)}"end"]}`)
}

export async function startFaultUpstream (t: Test, opts: { target?: string } = {}): Promise<FaultUpstream> {
  const seen: SeenRequest[] = []
  const perMethod = new Map<string, number>()
  const sockets = new Set<Socket>()
  let chooser: FaultChooser = () => ({ kind: 'pass' })

  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const socket = req.socket
      const recorded: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        connectionClosed: () => !sockets.has(socket)
      }
      // The transport matrix's `config first` opener is not the test's (transports.ts).
      if (isOpener(req.headers)) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' })
        res.end('{}')
        return
      }
      seen.push(recorded)
      const nth = (perMethod.get(recorded.method) ?? 0) + 1
      perMethod.set(recorded.method, nth)
      act(chooser(recorded, nth), recorded, res).catch(() => res.destroy())
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })

  async function act (fault: Fault, req: SeenRequest, res: ServerResponse): Promise<void> {
    switch (fault.kind) {
      case 'pass':
        return await pass(req, res)
      case 'answer': {
        const body = typeof fault.body === 'string' ? Buffer.from(fault.body) : fault.body
        res.writeHead(fault.status, { 'content-type': 'application/json', 'content-length': String(body.length), ...fault.headers })
        res.end(body)
        return
      }
      case 'stall-headers':
        return
      case 'stall-body':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(fault.body)) })
        res.write(fault.body.slice(0, fault.sendBytes))
        return
      case 'reset': {
        const sendBytes = fault.sendBytes ?? 0
        if (sendBytes === 0) {
          res.socket?.destroy()
          return
        }
        const body = fault.body ?? '{}'
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
        res.write(body.slice(0, sendBytes), () => setImmediate(() => res.socket?.destroy()))
        return
      }
      case 'truncate': {
        // Raw bytes: Node's ServerResponse would refuse to end a response shorter than its length.
        const socket = res.socket
        if (socket === null) return
        res.detachSocket(socket)
        const head = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(fault.body)}\r\nconnection: close\r\n\r\n`
        socket.end(head + fault.body.slice(0, fault.sendBytes))
        return
      }
      case 'huge': {
        const body = hugeJson(fault.bytes)
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) })
        const step = 256 * 1024
        for (let i = 0; i < body.length; i += step) {
          if (!res.write(body.subarray(i, i + step))) await new Promise(resolve => res.once('drain', resolve))
          if (res.destroyed) return
        }
        res.end()
      }
    }
  }

  async function pass (req: SeenRequest, res: ServerResponse): Promise<void> {
    if (opts.target === undefined) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' })
      res.end('{}')
      return
    }
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && !['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(k)) headers[k] = v
    }
    const up = await request(`${opts.target}${req.url}`, {
      method: req.method as 'GET',
      headers,
      body: req.body.length > 0 ? req.body : undefined
    })
    const body = Buffer.from(await up.body.arrayBuffer())
    const out: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(up.headers)) {
      if (v !== undefined && !['connection', 'transfer-encoding', 'keep-alive', 'content-length'].includes(k)) out[k] = v
    }
    res.writeHead(up.statusCode, { ...out, 'content-length': String(body.length) })
    res.end(body)
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => server.close(() => resolve()))
  }
  t.teardown(close)

  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    use (fn) { chooser = fn },
    count (method) { return seen.filter(r => r.method === method).length },
    openConnections () { return sockets.size },
    async drained (withinMs = 30_000) {
      const until = Date.now() + withinMs
      while (sockets.size > 0 && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 10))
      return sockets.size
    },
    close
  }
}

/** A small v2 table (`id`, `name`, `ts`) as a loadTable answer's `metadata`, for canned upstreams. */
export function fixtureMeta (): Record<string, unknown> {
  return {
    'format-version': 2,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: 's3://warehouse/db/t',
    'last-sequence-number': 0,
    'last-updated-ms': 1700000000000,
    'last-column-id': 3,
    'current-schema-id': 0,
    schemas: [{
      type: 'struct',
      'schema-id': 0,
      'identifier-field-ids': [1],
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'name', required: false, type: 'string' },
        { id: 3, name: 'ts', required: false, type: 'timestamptz' }
      ]
    }],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'last-partition-id': 999,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {},
    snapshots: [],
    refs: {},
    'snapshot-log': [],
    'metadata-log': []
  }
}

/**
 * A recording upstream's answer for triage tests: the fixture table for every GET but config, an
 * empty config for `/v1/config`, and `{}` for every write.
 */
export const fixtureResponder: Responder = (req, res) => {
  const body = req.method !== 'GET'
    ? '{}'
    : req.url.startsWith('/v1/config')
      ? '{"defaults":{},"overrides":{}}'
      : JSON.stringify({ 'metadata-location': 's3://w/db/t/metadata/00000.json', metadata: fixtureMeta() })
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
  res.end(body)
}

/** A Java-shaped schema commit on `meta` adding `fields` (default: one optional string column). */
export function schemaCommitFor (meta: Record<string, unknown>, fields?: unknown[]): Record<string, unknown> {
  const schemas = meta.schemas as Array<{ fields: unknown[] }>
  const current = schemas[0]!
  const added = fields ?? [{ id: (meta['last-column-id'] as number) + 1, name: 'added', required: false, type: 'string' }]
  return {
    requirements: [
      { type: 'assert-table-uuid', uuid: meta['table-uuid'] },
      { type: 'assert-current-schema-id', 'current-schema-id': meta['current-schema-id'] }
    ],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, 'identifier-field-ids': [1], fields: [...current.fields, ...added] } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }
}

/** The table every canned upstream serves. */
export const TABLE = '/v1/namespaces/db/tables/t'
