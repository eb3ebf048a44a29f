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
import { TLSSocket } from 'node:tls'
import { isResendable, resendOnce, upstreamError } from '../exchange-rules.js'
import { flatHeaders, type UpstreamClient, type UpstreamRequest, type UpstreamResponse } from '../undici/client.js'
import { headersToObject, relayResponseHeaders } from '../headers.js'
import { chunkedAnswer } from '../answer-body.js'
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
  /** The static admin token: an `Authorization` carrying it is not sent. */
  readonly adminToken?: string | undefined
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
  /** Body bytes kept so far (payload: chunk sizes not counted). */
  #bytes = 0
  /** Bytes of a chunked answer received so far, sizes and CRLFs included (the size limit). */
  #received = 0
  /** The socket reads into the body's buffer itself (TCP; TLS sockets hand over chunks of their own). */
  #readsInPlace = false
  #scanner: ChunkedScanner | undefined
  #reusable = false

  constructor (opts: PoolClientOptions, req: UpstreamRequest, resolve: (res: UpstreamResponse) => void, reject: (err: Error) => void) {
    this.#opts = opts
    this.#method = req.method
    this.#commit = req.commit === true
    this.#retryable = isResendable(req.method, req.body !== undefined)
    this.#resolve = resolve
    this.#reject = reject
    const headers = flatHeaders(req.headers, opts.adminToken)
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
    this.#readsInPlace = !(conn.socket instanceof TLSSocket)
    this.#sent = true
    this.#headBytes = undefined
    this.#head = undefined
    this.#chunks = []
    this.#whole = undefined
    this.#bytes = 0
    this.#received = 0
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

  /**
   * Body bytes as framed. A piece in the pool's reused read buffer is copied once, into where it
   * stays: a body of known length into its one buffer (later reads land there directly, see
   * `UpstreamConnection.readTarget`), chunk data (sizes and CRLFs dropped) into a piece of its own.
   */
  #body (chunk: Buffer): void {
    const head = this.#head as ResponseHead
    if (head.framing === 'length') {
      const left = head.length - this.#bytes
      if (head.length > this.#opts.maxResponseBytes) {
        return this.#fail(codedError(`answer larger than ${this.#opts.maxResponseBytes} bytes`, 'ICEGUARD_RESPONSE_TOO_LARGE'))
      }
      let take = chunk
      if (chunk.length >= left) {
        if (chunk.length > left) this.#reusable = false
        take = chunk.subarray(0, left)
      }
      // The length is known and within the limit: one buffer, no join at the end.
      const whole = this.#whole ??= Buffer.allocUnsafe(head.length)
      if (take.buffer !== whole.buffer || take.byteOffset !== whole.byteOffset + this.#bytes) take.copy(whole, this.#bytes)
      this.#bytes += take.length
      const up = this.#up as UpstreamConnection
      if (this.#bytes === head.length) {
        up.readTarget = undefined
        this.#done()
      } else if (this.#readsInPlace) {
        up.readTarget = whole.subarray(this.#bytes)
      }
      return
    }
    let end = -1
    if (head.framing === 'chunked') {
      end = (this.#scanner as ChunkedScanner).scan(chunk, 0, this.#keepData)
      if (end === -2) return this.#fail(codedError('invalid chunked encoding from the upstream', 'HPE_INVALID_CHUNK_SIZE'))
      if (end !== -1 && end < chunk.length) this.#reusable = false
      // The limit counts the bytes as they came, sizes included.
      this.#received += end === -1 ? chunk.length : end
    } else {
      this.#keepData(chunk, 0, chunk.length)
      this.#received = this.#bytes
    }
    if (this.#received > this.#opts.maxResponseBytes) {
      return this.#fail(codedError(`answer larger than ${this.#opts.maxResponseBytes} bytes`, 'ICEGUARD_RESPONSE_TOO_LARGE'))
    }
    if (end >= 0) this.#done()
  }

  /** Keeps body bytes of a chunked or close-delimited answer (copied: `buf` is the reused read buffer). */
  readonly #keepData = (buf: Buffer, from: number, to: number): void => {
    this.#chunks.push(Buffer.from(buf.subarray(from, to)))
    this.#bytes += to - from
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
    this.#resolve(chunkedAnswer(head.status, headersToObject(relayResponseHeaders(head.rawHeaders)),
      this.#whole === undefined ? this.#chunks : [this.#whole], this.#bytes))
  }

  #fail (err: Error): void {
    if (this.#settled) return
    const up = this.#up
    this.#up = undefined
    if (up !== undefined) {
      up.user = undefined
      up.readTarget = undefined
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
