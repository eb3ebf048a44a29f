/**
 * Requests written byte for byte on a raw socket (`net`), so targets that HTTP clients refuse or
 * rewrite (`#`, `\`, dot segments, case) reach iceguard as written, on either kind of connection:
 *
 * - `fresh`: a new connection whose first request is the one under test;
 * - `warm`: a kept-alive connection that first sent `GET /v1/config`, as PyIceberg's session and
 *   iceberg-js's fetch do.
 *
 * Which transport serves them is the transport matrix's (transports.ts).
 */
import net from 'node:net'

export type Transport = 'fresh' | 'warm'

export const TRANSPORTS: ReadonlyArray<{ readonly transport: Transport, readonly name: string }> = [
  { transport: 'fresh', name: 'fresh connection' },
  { transport: 'warm', name: 'kept-alive connection that began with GET /v1/config' }
]

export interface RawAnswer {
  readonly status: number
  /** Lower-case names; a repeated field keeps its last value. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface RawRequest {
  readonly method: string
  /** Written as given, latin1. */
  readonly target: string
  readonly body?: string
  readonly headers?: Readonly<Record<string, string>>
}

/** The request's bytes: Host, a JSON content type and Content-Length when there is a body. */
export function requestBytes (req: RawRequest): Buffer {
  let head = `${req.method} ${req.target} HTTP/1.1\r\nhost: iceguard.test\r\n`
  if (req.body !== undefined) head += `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(req.body)}\r\n`
  for (const [name, value] of Object.entries(req.headers ?? {})) head += `${name}: ${value}\r\n`
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), Buffer.from(req.body ?? '', 'utf8')])
}

/** Sends `req` on `transport` and reads its answer; the connection is closed afterwards. */
export async function exchange (port: number, transport: Transport, req: RawRequest): Promise<RawAnswer> {
  const conn = await RawConnection.open(port)
  try {
    if (transport === 'warm') {
      const config = await conn.send(requestBytes({ method: 'GET', target: '/v1/config' }), 'GET')
      if (config.status !== 200) throw new Error(`GET /v1/config answered ${config.status}: ${config.body}`)
    }
    return await conn.send(requestBytes(req), req.method)
  } finally {
    conn.close()
  }
}

/** One client connection, answers read in order (Content-Length, chunked, or none). */
export class RawConnection {
  readonly #socket: net.Socket
  #buf = Buffer.alloc(0)
  #closed = false
  #wake: (() => void) | undefined

  private constructor (socket: net.Socket) {
    this.#socket = socket
    socket.on('data', (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk])
      this.#wake?.()
    })
    socket.on('close', () => {
      this.#closed = true
      this.#wake?.()
    })
    socket.on('error', () => {})
  }

  static async open (port: number): Promise<RawConnection> {
    const socket = net.connect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    return new RawConnection(socket)
  }

  /** Writes `bytes` and resolves with the next complete answer. */
  async send (bytes: Buffer, method: string): Promise<RawAnswer> {
    this.#socket.write(bytes)
    for (;;) {
      const answer = this.#take(method)
      if (answer !== undefined) return answer
      if (this.#closed) throw new Error(`connection closed before a complete answer: ${JSON.stringify(this.#buf.toString('latin1').slice(0, 300))}`)
      await new Promise<void>(resolve => { this.#wake = resolve })
      this.#wake = undefined
    }
  }

  close (): void {
    this.#socket.destroy()
  }

  #take (method: string): RawAnswer | undefined {
    const buf = this.#buf
    const end = buf.indexOf('\r\n\r\n')
    if (end === -1) return undefined
    const lines = buf.toString('latin1', 0, end).split('\r\n')
    const status = Number((lines[0] ?? '').split(' ')[1])
    const headers: Record<string, string> = {}
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    let at = end + 4
    let body: Buffer
    if (method === 'HEAD' || status === 204 || status === 304) {
      body = Buffer.alloc(0)
    } else if (headers['transfer-encoding'] !== undefined) {
      const parts: Buffer[] = []
      for (;;) {
        const eol = buf.indexOf('\r\n', at)
        if (eol === -1) return undefined
        const size = parseInt(buf.toString('latin1', at, eol), 16)
        if (buf.length < eol + 2 + size + 2) return undefined
        if (size === 0) {
          at = eol + 4
          break
        }
        parts.push(buf.subarray(eol + 2, eol + 2 + size))
        at = eol + 2 + size + 2
      }
      body = Buffer.concat(parts)
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length'])
      if (buf.length < at + length) return undefined
      body = buf.subarray(at, at + length)
      at += length
    } else {
      // Read until the close.
      if (!this.#closed) return undefined
      body = buf.subarray(at)
      at = buf.length
    }
    this.#buf = buf.subarray(at)
    return { status, headers, body: body.toString('utf8') }
  }
}
