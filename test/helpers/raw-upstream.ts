/**
 * An upstream on a raw socket server: records each request iceguard sends it byte for byte (the
 * request line, the header lines as written, the body after Content-Length or chunked framing) with
 * no HTTP library in between, and answers each with a small JSON 200 on the kept-alive connection.
 * The requests come from iceguard's own writers (the fast lane's head writer or undici), so a plain
 * CRLF reader is enough; anything else it cannot read fails the test through `problems`.
 */
import net, { type AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface RawRequest {
  readonly method: string
  readonly target: string
  /** Names and values as written, flat, latin1. */
  readonly rawHeaders: string[]
  readonly body: Buffer
}

export interface RawUpstream {
  readonly url: string
  /** Complete requests, in the order they arrived. */
  readonly requests: RawRequest[]
  /** What the reader could not make sense of. */
  readonly problems: string[]
}

/** Reads one request from the start of `buf`: the request and its length, or undefined until more arrives. */
function readRequest (buf: Buffer): { request: RawRequest, used: number } | undefined | string {
  const end = buf.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const lines = buf.toString('latin1', 0, end).split('\r\n')
  const [method, target, version] = (lines[0] as string).split(' ')
  if (method === undefined || target === undefined || version !== 'HTTP/1.1') return `unreadable request line ${JSON.stringify(lines[0])}`
  const rawHeaders: string[] = []
  let length = -1
  let chunked = false
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon)
    const value = line.slice(colon + 1).trim()
    rawHeaders.push(name, value)
    if (name.toLowerCase() === 'content-length') length = Number(value)
    if (name.toLowerCase() === 'transfer-encoding') chunked = value.toLowerCase() === 'chunked'
  }
  let at = end + 4
  if (!chunked) {
    const size = Math.max(length, 0)
    if (buf.length < at + size) return undefined
    return { request: { method, target, rawHeaders, body: buf.subarray(at, at + size) }, used: at + size }
  }
  const parts: Buffer[] = []
  for (;;) {
    const eol = buf.indexOf('\r\n', at)
    if (eol === -1) return undefined
    const size = parseInt(buf.toString('latin1', at, eol), 16)
    if (Number.isNaN(size)) return 'unreadable chunk size'
    if (size === 0) {
      // The last chunk, then trailer lines (none, usually) and a blank line.
      const last = buf.indexOf('\r\n\r\n', eol)
      if (last === -1) return undefined
      return { request: { method, target, rawHeaders, body: Buffer.concat(parts) }, used: last + 4 }
    }
    if (buf.length < eol + 2 + size + 2) return undefined
    parts.push(buf.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
}

export async function startRawUpstream (t: Test): Promise<RawUpstream> {
  const requests: RawRequest[] = []
  const problems: string[] = []
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let buf = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk])
      for (;;) {
        const read = readRequest(buf)
        if (read === undefined) return
        if (typeof read === 'string') {
          problems.push(read)
          socket.destroy()
          return
        }
        buf = buf.subarray(read.used)
        requests.push(read.request)
        // An answer to HEAD has no body (RFC 9110 §9.3.2); this one says so with its length too.
        const body = read.request.method === 'HEAD' ? '' : JSON.stringify({ seen: requests.length })
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { url: `http://127.0.0.1:${port}`, requests, problems }
}
