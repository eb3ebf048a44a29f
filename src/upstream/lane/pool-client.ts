/**
 * The buffered upstream client (the contract of src/upstream/undici/client.ts) over the fast lane's
 * pool: `/v1/config`, the gate's base-metadata GET and the commit it forwards, on both transports
 * while the lane is on (src/main/app.ts).
 *
 * Why a second client: on a schema commit the undici client's request objects, parser callbacks
 * and its pool sit on the critical path twice (the base load, then the commit). Over the fast
 * lane's raw keep-alive sockets the same two exchanges cost a written head and a parsed one.
 * Failures keep the contract and the shared exchange rules (src/upstream/exchange-rules.ts):
 * `UpstreamError` from the catalogue, with `sent` telling whether the request reached the
 * upstream; a GET is resent once when a pooled socket turns out to be dead, a POST never.
 */
import { isResendable, resendOnce, upstreamError } from '../exchange-rules.js'
import { flatHeaders, type UpstreamClient, type UpstreamRequest, type UpstreamResponse } from '../undici/client.js'
import { headersToObject, relayResponseHeaders } from '../headers.js'
import { ChunkedScanner } from './chunked-scanner.js'
import { codedError } from './coded-error.js'
import { scanResponseHead, type ResponseHead } from './response-head.js'
import type { UpstreamConnection, UpstreamPool, UpstreamUser } from './upstream-pool.js'

export interface PoolClientOptions {
  readonly pool: UpstreamPool
  readonly basePath: string
  /** Host header for the upstream. */
  readonly upstreamHost: string
  readonly headersTimeout: number
  readonly bodyTimeout: number
  readonly retryAfter: number
  /** An answer larger than this is abandoned as a bad response. */
  readonly maxResponseBytes: number
  /** Times an exchange up to its response head (the upstream latency histogram). */
  readonly observe?: (method: string, status: number, seconds: number) => void
}

export function createPoolClient (opts: PoolClientOptions): UpstreamClient {
  return {
    request (req: UpstreamRequest): Promise<UpstreamResponse> {
      return new Promise((resolve, reject) => { new Exchange(opts, req, resolve, reject).start() })
    }
  }
}

/** One request and its answer on a pooled socket; resent once (GET/HEAD only) on a dead socket. */
class Exchange implements UpstreamUser {
  readonly #opts: PoolClientOptions
  readonly #method: string
  readonly #request: Buffer
  readonly #commit: boolean
  readonly #retryable: boolean
  readonly #resolve: (res: UpstreamResponse) => void
  readonly #reject: (err: Error) => void
  #up: UpstreamConnection | undefined
  #sent = false
  #retried = false
  #settled = false
  #startedAt = 0n
  /** Bytes of the response head read so far (copied: reads land in the pool's reused buffer). */
  #headBytes: Buffer | undefined
  #head: ResponseHead | undefined
  #chunks: Buffer[] = []
  /** The body of a Content-Length answer, filled as it arrives. */
  #whole: Buffer | undefined
  #bytes = 0
  #scanner: ChunkedScanner | undefined
  #reusable = false

  constructor (opts: PoolClientOptions, req: UpstreamRequest, resolve: (res: UpstreamResponse) => void, reject: (err: Error) => void) {
    this.#opts = opts
    this.#method = req.method
    this.#commit = req.commit === true
    this.#retryable = isResendable(req.method, req.body !== undefined)
    this.#resolve = resolve
    this.#reject = reject
    const headers = flatHeaders(req.headers)
    let head = `${req.method} ${opts.basePath}${req.path} HTTP/1.1\r\nhost: ${opts.upstreamHost}\r\nconnection: keep-alive\r\n`
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i] as string}: ${headers[i + 1] as string}\r\n`
    const body = req.body
    if (body !== undefined) head += `content-length: ${body.length}\r\n`
    head += '\r\n'
    // Head and body leave in one write (one segment for a small commit).
    const headLength = Buffer.byteLength(head, 'latin1')
    const out = Buffer.allocUnsafe(headLength + (body?.length ?? 0))
    out.write(head, 0, 'latin1')
    body?.copy(out, headLength)
    this.#request = out
  }

  start (): void {
    this.#opts.pool.acquire(this.#onAcquired)
  }

  readonly #onAcquired = (err: Error | null, conn?: UpstreamConnection): void => {
    if (err !== null || conn === undefined) {
      this.#fail(err ?? new Error('no upstream connection'))
      return
    }
    this.#up = conn
    conn.user = this
    this.#sent = true
    this.#headBytes = undefined
    this.#head = undefined
    this.#chunks = []
    this.#whole = undefined
    this.#bytes = 0
    this.#startedAt = process.hrtime.bigint()
    conn.socket.setTimeout(this.#opts.headersTimeout)
    conn.socket.write(this.#request)
  }

  onUpstreamData (chunk: Buffer): void {
    if (this.#settled) return
    if (this.#head !== undefined) {
      this.#body(chunk)
      return
    }
    const scanned = scanResponseHead(this.#headBytes === undefined ? chunk : Buffer.concat([this.#headBytes, chunk]), this.#method === 'HEAD')
    if ('error' in scanned) return this.#fail(scanned.error)
    if ('more' in scanned) {
      this.#headBytes = scanned.more === undefined ? undefined : Buffer.from(scanned.more)
      return
    }
    const res = scanned.head
    this.#headBytes = undefined
    this.#head = res
    this.#reusable = res.reusable
    this.#scanner = res.framing === 'chunked' ? new ChunkedScanner() : undefined
    this.#opts.observe?.(this.#method, res.status, Number(process.hrtime.bigint() - this.#startedAt) / 1e9)
    const socket = (this.#up as UpstreamConnection).socket
    if (this.#opts.bodyTimeout !== this.#opts.headersTimeout) socket.setTimeout(this.#opts.bodyTimeout)
    if (res.framing === 'none') {
      if (scanned.rest.length > 0) this.#reusable = false
      this.#done()
      return
    }
    if (scanned.rest.length > 0) this.#body(scanned.rest)
  }

  /** Body bytes as framed; each piece is copied (it lives in the pool's reused read buffer). */
  #body (chunk: Buffer): void {
    const head = this.#head as ResponseHead
    let take = chunk
    let complete = false
    if (head.framing === 'length') {
      const left = head.length - this.#bytes
      if (chunk.length >= left) {
        if (chunk.length > left) this.#reusable = false
        take = chunk.subarray(0, left)
        complete = true
      }
    } else if (head.framing === 'chunked') {
      const end = (this.#scanner as ChunkedScanner).scan(chunk)
      if (end === -2) return this.#fail(codedError('invalid chunked encoding from the upstream', 'HPE_INVALID_CHUNK_SIZE'))
      if (end !== -1) {
        if (end < chunk.length) this.#reusable = false
        take = chunk.subarray(0, end)
        complete = true
      }
    }
    if ((head.framing === 'length' ? head.length : this.#bytes + take.length) > this.#opts.maxResponseBytes) {
      return this.#fail(codedError(`answer larger than ${this.#opts.maxResponseBytes} bytes`, 'ICEGUARD_RESPONSE_TOO_LARGE'))
    }
    if (head.framing === 'length') {
      // The length is known (and within the limit, checked above on the first piece): one buffer,
      // one copy per piece, no join at the end.
      this.#whole ??= Buffer.allocUnsafe(head.length)
      take.copy(this.#whole, this.#bytes)
    } else {
      this.#chunks.push(Buffer.from(take))
    }
    this.#bytes += take.length
    if (complete) this.#done()
  }

  onUpstreamEnd (): void {
    if (this.#head?.framing === 'close') {
      this.#reusable = false
      this.#done()
      return
    }
    this.#fail(codedError('the upstream closed the connection before the answer was complete', 'UND_ERR_SOCKET'))
  }

  onUpstreamError (err: Error): void {
    this.#up = undefined
    this.#fail(err)
  }

  onUpstreamTimeout (): void {
    this.#fail(this.#head !== undefined
      ? codedError('the upstream stopped sending the answer body', 'UND_ERR_BODY_TIMEOUT')
      : codedError('the upstream did not send answer headers in time', 'UND_ERR_HEADERS_TIMEOUT'))
  }

  onUpstreamDrain (): void {}

  #done (): void {
    const head = this.#head as ResponseHead
    const up = this.#up
    this.#up = undefined
    this.#settled = true
    if (up !== undefined) this.#opts.pool.release(up, this.#reusable, head.keepAliveMs)
    const raw = this.#whole ?? (this.#chunks.length === 1 ? this.#chunks[0] as Buffer : Buffer.concat(this.#chunks, this.#bytes))
    this.#resolve({
      statusCode: head.status,
      headers: headersToObject(relayResponseHeaders(head.rawHeaders)),
      body: head.framing === 'chunked' ? dechunk(raw) : raw
    })
  }

  #fail (err: Error): void {
    if (this.#settled) return
    const up = this.#up
    this.#up = undefined
    if (up !== undefined) {
      up.user = undefined
      up.socket.destroy()
    }
    if (resendOnce(this.#retryable, this.#retried, this.#sent, this.#head !== undefined || this.#headBytes !== undefined, err)) {
      // The upstream closed a pooled keep-alive connection as we wrote to it: resend once.
      this.#retried = true
      this.#sent = false
      this.start()
      return
    }
    this.#settled = true
    this.#reject(upstreamError(err, this.#sent, this.#commit, this.#opts.retryAfter))
  }
}

/**
 * The payload of a complete chunked body (RFC 9112 §7.1), already checked by `ChunkedScanner`:
 * sizes and data, extensions and trailer fields dropped.
 */
export function dechunk (raw: Buffer): Buffer {
  const parts: Buffer[] = []
  let i = 0
  for (;;) {
    const eol = raw.indexOf('\r\n', i, 'latin1')
    if (eol === -1) break
    const line = raw.toString('latin1', i, eol)
    const semi = line.indexOf(';')
    const size = parseInt(semi === -1 ? line : line.slice(0, semi), 16)
    if (!(size > 0)) break
    parts.push(raw.subarray(eol + 2, eol + 2 + size))
    i = eol + 2 + size + 2
  }
  return parts.length === 1 ? parts[0] as Buffer : Buffer.concat(parts)
}
