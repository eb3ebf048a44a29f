/**
 * One client connection in the fast lane: reads a request head, triages it (src/edge/classify.ts,
 * as the front door does) and serves it, one request at a time: a pass-through call is relayed to
 * a pooled upstream socket and its answer back as it streams; `/v1/config` is read whole and
 * rewritten; a write the gate must see is read whole and handed to the gate (`gate`), which
 * forwards it or answers itself; iceguard's own routes are answered by Fastify in process
 * (`local`). Bytes of a pipelined next request wait in `buf` until the answer is complete.
 *
 * Only what the lane does not frame itself (HTTP/1.0, chunked bodies, `Expect`, upgrades) is
 * handed to node:http with every byte not yet consumed (`socket.unshift`), and the connection
 * stays with node:http and the front door from then on. Failures follow the exchange rules every
 * transport shares (src/upstream/exchange-rules.ts): nothing sent → 503 + Retry-After; sent, no
 * complete answer → 502/504 (CommitStateUnknown for a commit, whose answer is held until
 * complete); answer already started → the client connection is cut; a GET or HEAD without a body
 * is resent once when a pooled socket turns out to be dead.
 */
import { STATUS_CODES } from 'node:http'
import type net from 'node:net'
import { ERRORS, GateError, renderError, upstreamError, UpstreamError, type ErrorDef } from '../../errors.js'
import type { GatedKind, GateOutcome } from '../../gate/commit-gate.js'
import type { GateRequest } from '../../gate/gate-service.js'
import type { UpstreamClient } from '../../upstream/undici/client.js'
import { COMMIT_HOLD_LIMIT, isResendable, resendOnce } from '../../upstream/exchange-rules.js'
import { forwardRequestHeaders, relayResponseHeaders } from '../../upstream/headers.js'
import { classifyRequest, type ClassifiedRequest, type RouteKind } from '../classify.js'
import { hasContentCoding, needsGate } from '../../json/commit-scan.js'
import { configAnswer } from '../catalog-config.js'
import { bodyTooLarge } from '../read-body.js'
import { closingAnswer } from '../client-error.js'
import { ChunkedScanner } from '../../upstream/lane/chunked-scanner.js'
import { HeadProgress, headersObject, parseRequestHead, unfinishedHeadProblem, type RequestHead } from './request-head.js'
import { HEAD_END, scanResponseHead, type Framing } from '../../upstream/lane/response-head.js'
import { codedError } from '../../upstream/lane/coded-error.js'
import type { UpstreamConnection, UpstreamPool, UpstreamUser } from '../../upstream/lane/upstream-pool.js'

export interface FastLaneContext {
  readonly pool: UpstreamPool
  readonly basePath: string
  /** Host header for the upstream. */
  readonly upstreamHost: string
  readonly bodyLimit: number
  readonly maxHeadBytes: number
  readonly keepAliveTimeout: number
  readonly headersTimeout: number
  readonly bodyTimeout: number
  readonly retryAfter: number
  readonly closing: () => boolean
  /** Gives the socket (its unconsumed bytes already unshifted) to node:http. */
  readonly handOver: (socket: net.Socket) => void
  readonly onError: ((err: UpstreamError, method: string, url: string) => void) | undefined
  /**
   * Counts and times an answered request (the request counter and answer histogram of /metrics):
   * `judged` when the gate had it, `headAt` the `performance.now()` of its head.
   */
  readonly count: (kind: RouteKind, method: string, status: number, judged: boolean, headAt: number) => void
  /** Times an upstream round trip up to its response head. */
  readonly observe: (method: string, status: number, seconds: number) => void
  readonly connections: Set<ClientConnection>
  /** Buffered exchanges over `pool` (`/v1/config`). */
  readonly client: UpstreamClient
  /** Replaces the upstream's `uri` in `/v1/config`. */
  readonly publicUrl: string | undefined
  /** The static admin token: an `Authorization` carrying it is not forwarded. */
  readonly adminToken?: string | undefined
  /**
   * Judges a schema-relevant commit and forwards it over the fast lane's pool (the gate service
   * over `pool-client.ts`); absent, such commits are handed to node:http and Fastify.
   */
  readonly gate: ((request: GateRequest) => Promise<GateOutcome>) | undefined
  /** An id for the audit record of a commit the fast lane gates. */
  readonly requestId: () => string
  /**
   * Answers a request for iceguard's own routes in process (Fastify's `inject`); absent, such a
   * request hands its connection to node:http.
   */
  readonly local: ((request: LocalRequest) => Promise<LocalAnswer>) | undefined
  /** Told about a fault of the gate itself (a bug), for the log. */
  readonly onGateFault: ((err: unknown) => void) | undefined
}

export interface LocalRequest {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string | string[]>
  readonly body: Buffer
  readonly remoteAddress: string | undefined
}

export interface LocalAnswer {
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>
  readonly body: Buffer
}

const HEAD = 0 // waiting for (or reading) a request head; idle when `buf` is empty
const BODY_READ = 1 // reading a commit body whole, to scan it
const BODY_STREAM = 2 // streaming a Content-Length body to the upstream
const AWAIT = 3 // request sent; waiting for and relaying the answer
const DONE = 4 // closed, closing or handed over

/** A head and a body up to this size go out as one buffer: one plain write instead of a writev. */
const JOIN_LIMIT = 64 * 1024
/** Room for a body of JOIN_LIMIT after a head of up to 32 KB; a larger join gets a buffer of its own. */
const JOIN_BUFFER_SIZE = JOIN_LIMIT + 32 * 1024

/**
 * One buffer, reused, in which heads and bodies are joined for their write. A fresh buffer per
 * join cost an ArrayBuffer allocation (malloc, V8's backing-store bookkeeping and its sweeping)
 * for every answer and every commit: ~4% of iceguard's CPU samples on the data-commit workload
 * (perf), and reuse cut the CPU per request by 8–13% on small loads and data commits (A/B runs
 * alternating both builds). Reuse is safe because a write the kernel takes whole is copied before
 * `write` returns; when it is not (the socket busy or short of buffer space), the stream keeps
 * the bytes and the buffer is left to it.
 */
let joinBuffer = Buffer.allocUnsafeSlow(JOIN_BUFFER_SIZE)

/** Writes `head` (latin1) and `body` to `socket` in one write; returns what `write` returns. */
function writeJoined (socket: net.Socket, head: string, body: Buffer): boolean {
  const size = head.length + body.length
  // Bytes already waiting in the stream: this write will wait too, so it gets a buffer of its own
  // size rather than taking the shared one with it.
  const reuse = size <= JOIN_BUFFER_SIZE && socket.writableLength === 0
  const out = reuse ? joinBuffer.subarray(0, size) : Buffer.allocUnsafe(size)
  out.write(head, 0, 'latin1')
  body.copy(out, head.length)
  const ok = socket.write(out)
  if (reuse && socket.writableLength !== 0) joinBuffer = Buffer.allocUnsafeSlow(JOIN_BUFFER_SIZE)
  return ok
}

export class ClientConnection implements UpstreamUser {
  readonly socket: net.Socket
  readonly ctx: FastLaneContext
  phase = HEAD
  /** Bytes received and not yet consumed. */
  buf: Buffer | undefined = undefined
  /** How far an unfinished request head in `buf` has been checked. */
  progress: HeadProgress | undefined = undefined
  /** A commit body arriving in pieces: head and body together take `needed` bytes. */
  pending: Buffer[] = []
  pendingBytes = 0
  needed = 0

  // The request in flight.
  method = ''
  target = ''
  kind: RouteKind = 'passthrough'
  commit = false
  closeAfter = false
  /** The client half-closed: what it sent before is served, then the connection closes. */
  ended = false
  retryable = false
  retried = false
  sent = false
  upstreamHead = ''
  firstBody: Buffer | undefined = undefined
  bodyRemaining = 0
  /** Bytes of a refused body still to be read and dropped before the connection closes. */
  discard = 0
  up: UpstreamConnection | undefined = undefined
  startedAt = 0n
  /** When the request's head was read (`performance.now()`), for the answer's time. */
  headAt = 0
  /** The gate had the request (for the answer's kind). */
  judged = false

  // The answer in flight.
  resBuf: Buffer | undefined = undefined
  resHeadDone = false
  status = 0
  framing: Framing = 'none'
  remaining = 0
  reusable = false
  keepAliveHint = -1
  scanner: ChunkedScanner | undefined = undefined
  /** The client has the answer's head: a failure from here on cuts the connection. */
  started = false
  held: { head: string, chunks: Buffer[], bytes: number } | undefined = undefined
  /** The answer's head, not yet written. */
  clientHead: string | undefined = undefined
  upPaused = false
  /** Answers written but not yet taken by the client: the next request waits for 'drain'. */
  drainWait = false

  constructor (socket: net.Socket, ctx: FastLaneContext) {
    this.socket = socket
    this.ctx = ctx
    ctx.connections.add(this)
    socket.setTimeout(ctx.keepAliveTimeout)
    socket.on('data', this.onData)
    socket.on('end', this.onEnd)
    socket.on('close', this.onClose)
    socket.on('error', this.onSocketError)
    socket.on('timeout', this.onTimeout)
    socket.on('drain', this.onDrain)
  }

  /** Idle: between requests with nothing buffered (closed on shutdown). */
  get idle (): boolean {
    return this.phase === HEAD && this.buf === undefined
  }

  readonly onData = (chunk: Buffer): void => {
    switch (this.phase) {
      case HEAD:
        this.buf = this.buf === undefined ? chunk : Buffer.concat([this.buf, chunk])
        this.readHead()
        return
      case BODY_READ:
        // Collected, and joined once the whole body is here (no copy per chunk).
        this.pending.push(chunk)
        this.pendingBytes += chunk.length
        if ((this.buf as Buffer).length + this.pendingBytes >= this.needed) {
          this.buf = Buffer.concat([this.buf as Buffer, ...this.pending])
          this.pending = []
          this.pendingBytes = 0
          this.phase = HEAD
          this.readHead()
        }
        return
      case BODY_STREAM:
        this.streamBody(chunk)
        return
      case AWAIT:
        // A pipelined next request: kept until this answer is complete.
        this.buf = this.buf === undefined ? chunk : Buffer.concat([this.buf, chunk])
        this.socket.pause()
        return
      case DONE:
        // The rest of a refused body, dropped; then the connection closes.
        if (this.discard <= 0) return
        this.discard -= chunk.length
        if (this.discard <= 0) this.socket.destroy()
    }
  }

  readonly onEnd = (): void => {
    if (this.started) {
      // The client hung up while its answer streams: nobody reads the rest (node:http aborts such
      // an answer too), and the upstream socket, mid-answer, closes with this one (`onClose`).
      this.socket.destroy()
    } else if (this.phase === HEAD || this.phase === AWAIT) {
      // Half-closed by the client: the requests that arrived before are answered, as node:http
      // answers them, then the connection closes (`next`). Nothing in flight and no whole request
      // waiting: closed now (an unfinished head never completes).
      this.ended = true
      if (this.phase === HEAD) this.socket.end()
    } else if (this.phase !== DONE) {
      // The body stopped short: the request is incomplete and must not be answered as if whole.
      this.socket.destroy()
    }
  }

  readonly onClose = (): void => {
    this.phase = DONE
    this.ctx.connections.delete(this)
    const up = this.up
    if (up !== undefined) {
      // The upstream may still be sending: that socket cannot carry another request.
      this.up = undefined
      up.user = undefined
      up.socket.destroy()
    }
  }

  readonly onSocketError = (): void => { /* 'close' follows */ }

  readonly onTimeout = (): void => {
    // The client fell silent for the keep-alive timeout: between requests, mid-head or mid-body.
    // A request waiting for its answer is the upstream timeouts' to judge.
    // A client that stopped reading its answers is not waiting for anything.
    // A refused body that stopped coming is not waited for either.
    if (this.phase !== AWAIT || this.drainWait) this.socket.destroy()
  }

  readonly onDrain = (): void => {
    if (this.drainWait) {
      this.drainWait = false
      this.next()
      return
    }
    if (this.upPaused && this.up !== undefined) {
      this.upPaused = false
      this.up.socket.resume()
    }
  }

  /** Detaches from the socket and gives it, with every unconsumed byte, to node:http. */
  handOver (): void {
    const socket = this.socket
    this.phase = DONE
    if (this.ended) {
      // The client's end of the stream has been read already, and node:http could not be given it
      // again with the bytes before it: a request that node:http would serve, pipelined behind
      // one the fast lane served and then a half-close, is not answered.
      socket.end()
      return
    }
    this.ctx.connections.delete(this)
    socket.removeListener('data', this.onData)
    socket.removeListener('end', this.onEnd)
    socket.removeListener('close', this.onClose)
    socket.removeListener('error', this.onSocketError)
    socket.removeListener('timeout', this.onTimeout)
    socket.removeListener('drain', this.onDrain)
    socket.setTimeout(0)
    if (this.buf !== undefined) socket.unshift(this.buf)
    this.buf = undefined
    this.ctx.handOver(socket)
    if (socket.isPaused()) socket.resume()
  }

  /** Answers with an ErrorModel and closes the connection (malformed or oversized requests). */
  refuse (error: ErrorDef, message: string): void {
    this.phase = DONE
    this.socket.end(closingAnswer(new GateError(error, message)), () => this.socket.destroy())
  }

  readHead (): void {
    let buf = this.buf as Buffer
    // RFC 9112 §2.2: empty lines before a request line are ignored (llhttp skips any CR or LF there).
    if (this.progress === undefined) {
      let skip = 0
      while (skip < buf.length && (buf[skip] === 0x0d || buf[skip] === 0x0a)) skip++
      if (skip === buf.length) {
        this.buf = undefined
        return
      }
      if (skip > 0) buf = buf.subarray(skip)
    }
    this.buf = buf
    // The blank line can only begin where the last line checked so far ends.
    const end = buf.indexOf(HEAD_END, this.progress === undefined ? 0 : Math.max(0, this.progress.next - 2))
    if (end === -1 || end + 4 > this.ctx.maxHeadBytes) {
      if (buf.length > this.ctx.maxHeadBytes || end !== -1) return this.refuse(ERRORS.HEADERS_TOO_LARGE, 'Request headers are larger than this server accepts; send fewer or smaller headers')
      // Unfinished: refused at once if node:http would refuse it already.
      const problem = unfinishedHeadProblem(buf, this.progress ??= new HeadProgress())
      if (problem !== undefined) this.refuse(ERRORS.MALFORMED_HTTP, `Malformed HTTP request: ${problem}`)
      return
    }
    this.progress = undefined
    const head = parseRequestHead(buf.toString('latin1', 0, end))
    if ('bad' in head) {
      this.refuse(ERRORS.MALFORMED_HTTP, `Malformed HTTP request: ${head.bad}`)
      return
    }
    this.decide(head, end + 4)
  }

  /**
   * What to do with a request, from the triage both transports run (src/edge/classify.ts): every
   * Iceberg REST call is served here, whatever came before it on the connection; iceguard's own
   * routes (admin, docs, health, metrics) go to node:http and Fastify.
   */
  decide (h: RequestHead, headLen: number): void {
    // node:http keeps the heads it frames itself: HTTP/1.0, chunked requests, the `special` ones
    // (request-head.ts) and a missing or repeated Host.
    if (h.minor !== 1 || h.transferEncoding || h.special || h.hosts !== 1) return this.handOver()
    const ctx = this.ctx
    this.headAt = performance.now()
    this.judged = false
    if (ctx.closing()) {
      // A request on a kept-alive connection after SIGTERM, answered as the front door does.
      return this.answerOwn(h, 'passthrough', new GateError(ERRORS.SHUTTING_DOWN, 'iceguard is shutting down; the request was not forwarded and can be retried',
        { headers: { 'retry-after': String(ctx.retryAfter) } }), headLen)
    }
    const route = classifyRequest(h.method, h.target, h.contentLength > 0)
    const kind = route.kind
    if (kind === 'passthrough') return this.forward(h, headLen, kind, route.target, undefined)
    if (kind === 'local' && ctx.local === undefined) return this.handOver()
    if (kind === 'config') return this.serveConfig(h, headLen, route.target)
    // iceguard's own routes, a refusal or a write the gate may need: the body is read whole first
    // (bounded), so that the connection can go on after the answer.
    if (h.contentLength > ctx.bodyLimit) {
      // The body is read and dropped while the answer goes out, so that the client, still
      // sending, reads the 413 instead of a reset.
      this.phase = DONE
      this.discard = h.contentLength - ((this.buf as Buffer).length - headLen)
      this.buf = undefined
      return this.answerError(bodyTooLarge(ctx.bodyLimit))
    }
    const length = Math.max(h.contentLength, 0)
    const buf = this.buf as Buffer
    if (buf.length < headLen + length) {
      this.phase = BODY_READ
      this.needed = headLen + length
      return
    }
    const body = buf.subarray(headLen, headLen + length)
    if (kind === 'local') return this.serveLocal(h, headLen + length, body)
    if (kind === 'refused') return this.answerOwn(h, kind, new GateError(ERRORS.BAD_REQUEST, route.message ?? 'Cannot forward the request'), headLen + length)
    // The same choice as Fastify's write route (routes/iceberg/write.ts): a data-only commit is
    // forwarded from its bytes; every other write is the gate's.
    const scannable = (kind === 'update-table' || kind === 'transaction') && !hasContentCoding(h.contentEncoding)
    if (scannable && !needsGate(body)) return this.forward(h, headLen, kind, route.target, body)
    if (ctx.gate === undefined) return this.handOver()
    this.gate(h, headLen, route, body, scannable)
  }

  /** Marks the request at the start of `buf` (`used` bytes) as answered here; pipelined bytes wait. */
  take (h: RequestHead, kind: RouteKind, target: string, used: number, commit: boolean): void {
    const buf = this.buf as Buffer
    this.buf = used < buf.length ? buf.subarray(used) : undefined
    this.method = h.method
    this.target = target
    this.kind = kind
    this.commit = commit
    this.closeAfter = this.closeAfter || h.close
    this.phase = AWAIT
    if (this.buf !== undefined) this.socket.pause()
  }

  /** Answers with iceguard's own ErrorModel, nothing forwarded; the connection goes on. */
  answerOwn (h: RequestHead, kind: RouteKind, err: GateError, used: number): void {
    this.take(h, kind, h.target, used, false)
    const out = err.toResponse()
    this.answerGated(err.statusCode, err.headers, undefined, Buffer.from(JSON.stringify(out)), true)
  }

  /**
   * iceguard's own routes (admin, operations, docs), rare next to Iceberg calls: Fastify answers
   * them in process (`ctx.local`, its `inject`) and the connection stays in the lane. Fastify's
   * hooks count and log them as on node:http.
   */
  serveLocal (h: RequestHead, used: number, body: Buffer): void {
    const ctx = this.ctx
    this.take(h, 'local', h.target, used, false)
    const local = ctx.local as NonNullable<FastLaneContext['local']>
    local({ method: h.method, url: h.target, headers: headersObject(h.rawHeaders), body, remoteAddress: this.socket.remoteAddress }).then((res) => {
      if (this.phase === DONE) return
      this.answerGated(res.statusCode, res.headers, undefined, h.method === 'HEAD' ? Buffer.alloc(0) : res.body, false, false)
    }, (err: unknown) => this.onGateFailed(err))
  }

  /** `GET /v1/config`: read whole over the pool, `uri`s rewritten (src/edge/catalog-config.ts). */
  serveConfig (h: RequestHead, headLen: number, target: string): void {
    const ctx = this.ctx
    this.take(h, 'config', target, headLen, false)
    const headers = forwardRequestHeaders(h.rawHeaders, { remoteAddress: this.socket.remoteAddress, encrypted: false }, true, this.ctx.adminToken)
      .filter((_, i, all) => (i % 2 === 0 ? all[i] : all[i - 1]) !== 'accept-encoding')
    // The body is rewritten, so it is asked for uncompressed.
    headers.push('accept-encoding', 'identity')
    ctx.client.request({ method: 'GET', path: target, headers }).then((res) => {
      if (this.phase === DONE) return
      const answer = configAnswer(res, ctx.publicUrl)
      this.answerGated(answer.statusCode, answer.headers, undefined, answer.body, false)
    }).catch((err: unknown) => {
      if (this.phase === DONE) return
      this.phase = DONE
      const mapped = err instanceof GateError ? err : upstreamError(err, false, false, ctx.retryAfter)
      if (mapped instanceof UpstreamError) ctx.onError?.(mapped, this.method, this.target)
      this.answerError(mapped)
    })
  }

  /**
   * Hands a commit read whole to the gate and writes its outcome: the upstream's answer, or the
   * gate's own ErrorModel with nothing forwarded. The gate's path is the one Fastify's route takes
   * (routes/iceberg/gated-write.ts); only the transport differs. Pipelined bytes wait, as for an
   * answer in flight.
   */
  gate (h: RequestHead, headLen: number, route: ClassifiedRequest, body: Buffer, scanned: boolean): void {
    const ctx = this.ctx
    this.take(h, route.kind, route.target, headLen + body.length, true)
    this.judged = true
    const judging = (ctx.gate as NonNullable<FastLaneContext['gate']>)({
      kind: route.kind as GatedKind,
      ident: { prefix: route.prefix, namespace: route.namespace, table: route.table },
      method: h.method,
      path: route.target,
      rawBody: body,
      scanned,
      headers: headersObject(h.rawHeaders),
      forwardHeaders: forwardRequestHeaders(h.rawHeaders, { remoteAddress: this.socket.remoteAddress, encrypted: false }, true, this.ctx.adminToken),
      requestId: ctx.requestId()
    })
    judging.then(this.onGated, this.onGateFailed)
  }

  readonly onGated = (outcome: GateOutcome): void => {
    // The client left while the gate worked: nobody to answer (the audit has the outcome).
    if (this.phase === DONE) return
    if (outcome.type === 'answer') {
      const { statusCode, headers, body } = outcome.answer
      this.answerGated(statusCode, headers, undefined, Buffer.from(JSON.stringify(body)), true)
      return
    }
    const res = outcome.response
    this.answerGated(res.statusCode, res.headers, outcome.headers, res.chunks ?? res.body, false)
  }

  readonly onGateFailed = (err: unknown): void => {
    // The gate answers its own faults; reaching here is a bug. Nothing is known to be forwarded.
    this.ctx.onGateFault?.(err)
    if (this.phase === DONE) return
    this.phase = DONE
    this.answerError(new GateError(ERRORS.UPSTREAM_UNAVAILABLE, 'Cannot validate commit: iceguard failed while evaluating it (see the iceguard log); nothing was committed, retry later',
      { headers: { 'retry-after': String(this.ctx.retryAfter) } }))
  }

  /**
   * Writes a whole answer (the gate's or the upstream's, as the gate relays it: the pieces it
   * arrived in, written together, not joined), then goes on.
   */
  answerGated (status: number, headers: Readonly<Record<string, string | readonly string[] | undefined>>,
    extra: Readonly<Record<string, string>> | undefined, body: Buffer | readonly Buffer[], own: boolean, count = true): void {
    const ctx = this.ctx
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`
    if (own) head += `content-type: application/json; charset=utf-8\r\ndate: ${new Date().toUTCString()}\r\n`
    for (const name in headers) {
      const value = headers[name]
      if (value === undefined || name === 'content-length' || name === 'connection' || name === 'keep-alive' || name === 'transfer-encoding') continue
      if (typeof value === 'string') head += `${name}: ${value}\r\n`
      else for (const v of value) head += `${name}: ${v}\r\n`
    }
    if (extra !== undefined) for (const name in extra) head += `${name}: ${extra[name] as string}\r\n`
    if (!Buffer.isBuffer(body) && body.length < 2) body = body[0] ?? Buffer.alloc(0)
    // 204 and 304 carry no body and no length (RFC 9110 §8.6).
    if (status === 204 || status === 304) body = Buffer.alloc(0)
    else head += `content-length: ${Buffer.isBuffer(body) ? body.length : body.reduce((n, piece) => n + piece.length, 0)}\r\n`
    this.closeAfter = this.closeAfter || ctx.closing()
    head += this.closeAfter ? 'connection: close\r\n\r\n' : `connection: keep-alive\r\nkeep-alive: timeout=${Math.floor(ctx.keepAliveTimeout / 1000)}\r\n\r\n`
    if (Buffer.isBuffer(body) && body.length <= JOIN_LIMIT) writeJoined(this.socket, head, body)
    else {
      this.socket.cork()
      this.socket.write(head, 'latin1')
      if (Buffer.isBuffer(body)) this.socket.write(body)
      else for (const piece of body) this.socket.write(piece)
      this.socket.uncork()
    }
    if (count) ctx.count(this.kind, this.method, status, this.judged, this.headAt)
    this.afterAnswer()
  }

  /** Forwards the request on `target` (the canonical one, src/edge/request-target.ts). */
  forward (h: RequestHead, headLen: number, kind: RouteKind, target: string, commitBody: Buffer | undefined): void {
    const ctx = this.ctx
    const buf = this.buf as Buffer
    this.method = h.method
    this.target = target
    this.kind = kind
    this.commit = commitBody !== undefined
    this.closeAfter = this.closeAfter || h.close
    this.retryable = isResendable(h.method, h.contentLength > 0)
    this.retried = false
    this.sent = false
    const headers = forwardRequestHeaders(h.rawHeaders, { remoteAddress: this.socket.remoteAddress, encrypted: false }, false, this.ctx.adminToken)
    let head = `${h.method} ${ctx.basePath}${target} HTTP/1.1\r\nhost: ${ctx.upstreamHost}\r\nconnection: keep-alive\r\n`
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i] as string}: ${headers[i + 1] as string}\r\n`
    this.upstreamHead = head + '\r\n'

    let used = headLen
    if (commitBody !== undefined) {
      this.firstBody = commitBody
      this.bodyRemaining = 0
      used += commitBody.length
    } else if (h.contentLength > 0) {
      const have = Math.min(h.contentLength, buf.length - headLen)
      this.firstBody = have > 0 ? buf.subarray(headLen, headLen + have) : undefined
      this.bodyRemaining = h.contentLength - have
      used += have
    } else {
      this.firstBody = undefined
      this.bodyRemaining = 0
    }
    this.buf = used < buf.length ? buf.subarray(used) : undefined
    this.phase = this.bodyRemaining > 0 ? BODY_STREAM : AWAIT
    // Nothing more is read until an upstream socket takes the request.
    if (this.bodyRemaining > 0 || this.buf !== undefined) this.socket.pause()
    ctx.pool.acquire(this.onAcquired)
  }

  readonly onAcquired = (err: Error | null, conn?: UpstreamConnection): void => {
    if (this.phase === DONE) {
      // The client left while waiting: the socket carried nothing of this request.
      if (conn !== undefined) this.ctx.pool.release(conn, true, -1)
      return
    }
    if (err !== null || conn === undefined) {
      this.fail(err ?? new Error('no upstream connection'))
      return
    }
    this.up = conn
    conn.user = this
    this.sent = true
    this.resBuf = undefined
    this.resHeadDone = false
    this.started = false
    this.held = undefined
    this.upPaused = false
    this.startedAt = process.hrtime.bigint()
    const socket = conn.socket
    socket.setTimeout(this.ctx.headersTimeout)
    if (this.firstBody !== undefined && this.firstBody.length <= JOIN_LIMIT) {
      writeJoined(socket, this.upstreamHead, this.firstBody)
      this.firstBody = undefined
    } else if (this.firstBody !== undefined) {
      socket.cork()
      socket.write(this.upstreamHead, 'latin1')
      socket.write(this.firstBody)
      socket.uncork()
      this.firstBody = undefined
    } else {
      socket.write(this.upstreamHead, 'latin1')
    }
    if (this.phase === BODY_STREAM) this.socket.resume()
  }

  streamBody (chunk: Buffer): void {
    const up = this.up
    if (up === undefined) {
      // Not sent yet (the socket is paused until then): keep the bytes in order.
      this.buf = this.buf === undefined ? chunk : Buffer.concat([this.buf, chunk])
      return
    }
    let part = chunk
    if (chunk.length >= this.bodyRemaining) {
      part = chunk.subarray(0, this.bodyRemaining)
      if (chunk.length > this.bodyRemaining) {
        this.buf = chunk.subarray(this.bodyRemaining)
        this.socket.pause()
      }
      this.bodyRemaining = 0
      this.phase = AWAIT
    } else {
      this.bodyRemaining -= chunk.length
    }
    if (!up.socket.write(part) && this.phase === BODY_STREAM) this.socket.pause()
  }

  onUpstreamDrain (): void {
    if (this.phase === BODY_STREAM) this.socket.resume()
  }

  onUpstreamData (chunk: Buffer): void {
    if (this.resHeadDone) {
      this.relayBody(chunk)
      return
    }
    const scanned = scanResponseHead(this.resBuf === undefined ? chunk : Buffer.concat([this.resBuf, chunk]), this.method === 'HEAD')
    if ('error' in scanned) return this.fail(scanned.error)
    if ('more' in scanned) {
      // Kept for the next read: a copy, as `chunk` lives in the pool's read buffer.
      this.resBuf = scanned.more === undefined ? undefined : Buffer.from(scanned.more)
      return
    }
    const res = scanned.head
    this.resBuf = undefined
    this.resHeadDone = true
    this.startHead(res.status, res.rawHeaders, res.framing, res.length, res.reusable, res.keepAliveMs, scanned.rest)
  }

  startHead (status: number, rawHeaders: string[], framing: Framing, length: number, reusable: boolean, keepAliveMs: number, rest: Buffer): void {
    const ctx = this.ctx
    this.status = status
    this.framing = framing
    this.remaining = length
    this.reusable = reusable
    this.keepAliveHint = keepAliveMs
    this.scanner = framing === 'chunked' ? new ChunkedScanner() : undefined
    ctx.observe(this.method, status, Number(process.hrtime.bigint() - this.startedAt) / 1e9)
    if (ctx.bodyTimeout !== ctx.headersTimeout) this.up?.socket.setTimeout(ctx.bodyTimeout)
    // A chunked or close-delimited answer must not also carry a Content-Length to the client.
    const headers = relayResponseHeaders(rawHeaders, framing === 'chunked' || framing === 'close')
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i] as string}: ${headers[i + 1] as string}\r\n`
    // An answer read until the upstream closes is re-framed as chunked for the kept-alive client.
    if (framing === 'chunked' || framing === 'close') head += 'transfer-encoding: chunked\r\n'
    this.closeAfter = this.closeAfter || ctx.closing()
    head += this.closeAfter ? 'connection: close\r\n\r\n' : `connection: keep-alive\r\nkeep-alive: timeout=${Math.floor(ctx.keepAliveTimeout / 1000)}\r\n\r\n`
    if (this.commit) {
      this.held = { head, chunks: [], bytes: 0 }
    } else {
      // Written with the first body bytes when they came along (see `out`).
      this.started = true
      this.clientHead = head
    }
    if (framing === 'none') {
      if (rest.length > 0) this.reusable = false
      this.complete()
      return
    }
    if (rest.length > 0) this.relayBody(rest)
    this.flushHead()
  }

  /** Writes the answer's head if it is still waiting for body bytes to go with. */
  flushHead (): void {
    const head = this.clientHead
    if (head === undefined) return
    this.clientHead = undefined
    this.socket.write(head, 'latin1')
  }

  relayBody (chunk: Buffer): void {
    switch (this.framing) {
      case 'length':
        if (chunk.length >= this.remaining) {
          // Bytes past the announced length: that upstream connection is out of step.
          if (chunk.length > this.remaining) this.reusable = false
          this.out(chunk.length === this.remaining ? chunk : chunk.subarray(0, this.remaining), false)
          this.remaining = 0
          this.complete()
          return
        }
        this.remaining -= chunk.length
        this.out(chunk, true)
        return
      case 'chunked': {
        const end = (this.scanner as ChunkedScanner).scan(chunk)
        if (end === -2) return this.fail(codedError('invalid chunked encoding from the upstream', 'HPE_INVALID_CHUNK_SIZE'))
        if (end === -1) {
          this.out(chunk, true)
          return
        }
        if (end < chunk.length) this.reusable = false
        this.out(end === chunk.length ? chunk : chunk.subarray(0, end), false)
        this.complete()
        return
      }
      case 'close':
        if (chunk.length === 0) return
        if (this.held !== undefined) {
          this.out(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`, 'latin1'), chunk, Buffer.from('\r\n', 'latin1')]), false)
          return
        }
        this.flushHead()
        this.socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1')
        this.out(chunk, true)
        this.socket.write('\r\n', 'latin1')
        return
      default:
        this.reusable = false
    }
  }

  /**
   * Answer bytes for the client: held for a commit, else written with back-pressure. `chunk` may
   * live in the upstream socket's read buffer, which the next read overwrites: a held chunk is
   * copied when `keep` says the answer goes on past this read, and a write the client socket does
   * not take whole gives the read buffer away (`readBufferTaken`).
   */
  out (chunk: Buffer, keep: boolean): void {
    const held = this.held
    if (held !== undefined) {
      held.chunks.push(keep ? Buffer.from(chunk) : chunk)
      held.bytes += chunk.length
      if (held.bytes <= COMMIT_HOLD_LIMIT) return
      // Too large to hold: stream the rest (a break-off from here on cuts the connection).
      this.held = undefined
      this.started = true
      this.socket.write(held.head, 'latin1')
      chunk = Buffer.concat(held.chunks, held.bytes)
    }
    const head = this.clientHead
    let ok: boolean
    if (head !== undefined && chunk.length <= JOIN_LIMIT) {
      this.clientHead = undefined
      ok = writeJoined(this.socket, head, chunk)
    } else {
      this.flushHead()
      ok = this.socket.write(chunk)
      this.keptByWrite()
    }
    if (!ok && this.up !== undefined && !this.upPaused) {
      this.upPaused = true
      this.up.socket.pause()
    }
  }

  /** After a write of upstream bytes: if the client socket could not take them all, it keeps them. */
  keptByWrite (): void {
    if (this.socket.writableLength !== 0 && this.up !== undefined) this.up.readBufferTaken = true
  }

  onUpstreamEnd (): void {
    if (this.resHeadDone && this.framing === 'close') {
      // The answer ran to the close: end the re-framed chunked body.
      if (this.held !== undefined) this.out(Buffer.from('0\r\n\r\n', 'latin1'), false)
      else {
        this.flushHead()
        this.socket.write('0\r\n\r\n', 'latin1')
      }
      this.reusable = false
      this.complete()
      return
    }
    this.fail(codedError('the upstream closed the connection before the answer was complete', 'UND_ERR_SOCKET'))
  }

  onUpstreamError (err: Error): void {
    this.up = undefined
    this.fail(err)
  }

  onUpstreamTimeout (): void {
    // A paused upstream waits for the client to read, not the other way round.
    if (this.upPaused) return
    this.fail(this.resHeadDone
      ? codedError('the upstream stopped sending the answer body', 'UND_ERR_BODY_TIMEOUT')
      : codedError('the upstream did not send answer headers in time', 'UND_ERR_HEADERS_TIMEOUT'))
  }

  /** The answer is complete: release the upstream socket, then serve the next request or close. */
  complete (): void {
    const ctx = this.ctx
    const held = this.held
    if (held !== undefined) {
      this.held = undefined
      const body = held.chunks.length === 1 ? held.chunks[0] as Buffer : Buffer.concat(held.chunks, held.bytes)
      if (body.length <= JOIN_LIMIT) writeJoined(this.socket, held.head, body)
      else {
        this.socket.write(held.head, 'latin1')
        this.socket.write(body)
        this.keptByWrite()
      }
    }
    // Before anything else can write to this socket (the next request, or node:http after a handover).
    this.flushHead()
    ctx.count(this.kind, this.method, this.status, this.judged, this.headAt)
    const up = this.up
    this.up = undefined
    if (up !== undefined) {
      // Paused for a slow client: it is fully read now, and must read again once reused.
      if (this.upPaused) up.socket.resume()
      ctx.pool.release(up, this.reusable && this.bodyRemaining === 0, this.keepAliveHint)
    }
    this.upPaused = false
    this.resHeadDone = false
    this.started = false
    this.afterAnswer()
  }

  /** An answer is written: serve the next request, wait for the client to read, or close. */
  afterAnswer (): void {
    const ctx = this.ctx
    // A request body the upstream did not wait for is still arriving: the connection cannot continue.
    if (this.phase === BODY_STREAM) this.closeAfter = true
    if (!this.closeAfter && !ctx.closing() && this.socket.writableNeedDrain) {
      // The client is not reading its answers (pipelining and never reading, or just slow): the
      // next request waits until they have drained, so one connection queues at most one answer
      // beyond what the socket buffers hold. Bytes arriving meanwhile are kept, as while an answer
      // is pending (AWAIT), and reading stops.
      this.drainWait = true
      this.phase = AWAIT
      this.socket.pause()
      return
    }
    this.next()
  }

  /** Serves the next request (pipelined bytes already here first), or closes. */
  next (): void {
    if (this.closeAfter || this.ctx.closing()) {
      this.phase = DONE
      this.socket.destroySoon()
      return
    }
    this.phase = HEAD
    if (this.buf !== undefined) this.readHead()
    if (this.phase !== HEAD) return
    if (this.ended) {
      // Half-closed, and no whole request left: done.
      this.phase = DONE
      this.socket.end()
    } else if (this.socket.isPaused()) this.socket.resume()
  }

  fail (err: Error): void {
    const up = this.up
    this.up = undefined
    if (up !== undefined) {
      up.user = undefined
      up.socket.destroy()
    }
    if (this.phase === DONE) return
    if (resendOnce(this.retryable, this.retried, this.sent, this.resHeadDone || this.resBuf !== undefined, err)) {
      // The upstream closed a pooled keep-alive connection as we wrote to it: resend once.
      this.retried = true
      this.sent = false
      this.ctx.pool.acquire(this.onAcquired)
      return
    }
    const mapped = upstreamError(err, this.sent, this.commit, this.ctx.retryAfter)
    this.ctx.onError?.(mapped, this.method, this.target)
    this.phase = DONE
    if (this.started) {
      // Part of the answer is already with the client: cutting the connection is the only honest signal.
      this.socket.destroy()
      return
    }
    this.held = undefined
    this.clientHead = undefined
    this.answerError(mapped)
  }

  answerError (err: GateError): void {
    const out = renderError(err)
    let head = `HTTP/1.1 ${out.statusCode} ${STATUS_CODES[out.statusCode] ?? ''}\r\n`
    for (const [name, value] of Object.entries(out.headers)) if (name !== 'connection') head += `${name}: ${value}\r\n`
    this.ctx.count(this.kind, this.method, out.statusCode, this.judged, this.headAt)
    // The connection is not reused after a failed exchange: part of a request body may be unread.
    this.socket.end(`${head}connection: close\r\n\r\n${out.body}`, 'utf8', () => { if (this.discard <= 0) this.socket.destroy() })
  }
}
