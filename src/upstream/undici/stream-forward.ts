/**
 * The pass-through path: one request in, one request out, bodies streamed both ways.
 *
 * It talks to undici's dispatcher directly with a small handler object, so there is no body
 * parsing, no re-encoding and no intermediate stream: request chunks go from the client socket
 * to the upstream socket, response chunks are written to the client `res` as they arrive, with
 * back-pressure both ways. Failures are classified by whether the request left:
 * nothing sent → 503 + Retry-After (safe to retry); sent but no complete answer → 502/504; answer
 * already started → the client socket is destroyed, so a truncated body is never mistaken for a
 * whole one.
 *
 * A commit's answer is held until it is complete (up to COMMIT_HOLD_LIMIT bytes): a commit whose
 * answer breaks off must reach the client as 502/504 CommitStateUnknownException. A cut connection
 * would surface in Java as a plain RESTException, and snapshot producers delete the files they
 * wrote on any failure other than CommitStateUnknownException — files a landed commit now uses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { Dispatcher } from 'undici'
import { renderError, type UpstreamError } from '../../errors.js'
import { COMMIT_HOLD_LIMIT, isResendable, resendOnce, upstreamError } from '../exchange-rules.js'
import { forwardRequestHeaders, relayResponseHeaders } from '../headers.js'

export interface ForwardOptions {
  /** A write whose outcome matters: failures after sending say "commit state unknown". */
  readonly commit?: boolean
  /** Send these bytes instead of streaming `req` (the request body was already read). */
  readonly body?: Buffer
}

export interface StreamForwarderOptions {
  readonly basePath: string
  readonly retryAfter: number
  /** Called for failures worth a log line (never per successful request). */
  readonly onError?: (err: UpstreamError | Error, req: IncomingMessage) => void
  /** The static admin token: an `Authorization` carrying it is not forwarded. */
  readonly adminToken?: string | undefined
}

function hasBody (req: IncomingMessage): boolean {
  const h = req.headers
  const len = h['content-length']
  return (len !== undefined && len !== '0') || h['transfer-encoding'] !== undefined
}

export class StreamForwarder {
  readonly #dispatcher: Dispatcher
  readonly #basePath: string
  readonly #retryAfter: number
  readonly #onError: StreamForwarderOptions['onError']
  readonly #adminToken: string | undefined

  constructor (dispatcher: Dispatcher, options: StreamForwarderOptions) {
    this.#dispatcher = dispatcher
    this.#basePath = options.basePath
    this.#retryAfter = options.retryAfter
    this.#onError = options.onError
    this.#adminToken = options.adminToken
  }

  /**
   * Forwards `req` (method, `req.url`, which the front door set to the canonical target, headers,
   * body as received) and relays the answer into `res`.
   */
  forward (req: IncomingMessage, res: ServerResponse, options: ForwardOptions = {}): void {
    const body = options.body
    const stream = body === undefined && hasBody(req)
    const socket = req.socket as Partial<TLSSocket> | null
    const headers = forwardRequestHeaders(req.rawHeaders, {
      remoteAddress: socket?.remoteAddress,
      encrypted: socket?.encrypted === true
    }, body !== undefined, this.#adminToken)
    const handler = new RelayHandler(this, req, res, options.commit === true, !stream && body === undefined)
    handler.dispatchOptions = {
      method: req.method as Dispatcher.HttpMethod,
      path: this.#basePath + (req.url ?? '/'),
      headers,
      body: body ?? (stream ? req : null)
    }
    res.once('close', handler.onClientClose)
    this.dispatch(handler)
  }

  /** @internal */
  dispatch (handler: RelayHandler): void {
    try {
      this.#dispatcher.dispatch(handler.dispatchOptions, handler)
    } catch (err) {
      handler.onError(err as Error)
    }
  }

  /** @internal */
  fail (handler: RelayHandler, err: Error): void {
    const { req, res } = handler
    if (res.destroyed || res.writableEnded) return
    const mapped = upstreamError(err, handler.sent, handler.commit, this.#retryAfter)
    if (this.#onError !== undefined) this.#onError(mapped, req)
    if (handler.started || res.headersSent) {
      // Part of the answer is already with the client: cutting the connection is the only honest signal.
      res.destroy(err)
      return
    }
    const out = renderError(mapped)
    res.writeHead(out.statusCode, out.headers)
    res.end(out.body)
  }
}

/** Per-request state, in undici's handler shape (no wrapper objects on the hot path). */
class RelayHandler implements Dispatcher.DispatchHandler {
  readonly forwarder: StreamForwarder
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly commit: boolean
  /** No body to resend, safe method: one retry on a dead keep-alive socket is harmless. */
  readonly retryable: boolean
  dispatchOptions: Dispatcher.DispatchOptions = { method: 'GET', path: '/' }
  abort: ((err?: Error) => void) | undefined = undefined
  resume: (() => void) | undefined = undefined
  sent = false
  started = false
  done = false
  retried = false
  /** A commit's answer, held until complete: status, headers and body chunks. */
  held: { statusCode: number, headers: string[], chunks: Buffer[], bytes: number } | undefined = undefined

  constructor (forwarder: StreamForwarder, req: IncomingMessage, res: ServerResponse, commit: boolean, noBody: boolean) {
    this.forwarder = forwarder
    this.req = req
    this.res = res
    this.commit = commit
    this.retryable = isResendable(req.method ?? '', !noBody)
  }

  /** The client hung up: from then on this request has nobody to answer. */
  clientGone = false

  readonly onClientClose = (): void => {
    this.clientGone = true
    if (!this.done && this.abort !== undefined) this.abort(new Error('client closed the connection'))
  }

  readonly onDrain = (): void => {
    this.resume?.()
  }

  onConnect (abort: (err?: Error) => void): void {
    this.abort = abort
    // A request waits in undici's queue while every upstream connection is busy; a client that
    // left meanwhile gets nothing sent for it (a commit would land for nobody), and a request under
    // way for a gone client would wait on its answer's backpressure forever.
    if (this.clientGone && !this.done) {
      abort(new Error('client closed the connection'))
      return
    }
    this.sent = true
  }

  onHeaders (statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // 1xx interim answers (103 Early Hints) are not relayed; Node has already sent 100-continue.
    if (statusCode < 200) return true
    this.resume = resume
    const headers = relayResponseHeaders(rawHeaders)
    if (this.commit) {
      this.held = { statusCode, headers, chunks: [], bytes: 0 }
      return true
    }
    this.writeHead(statusCode, headers)
    return true
  }

  writeHead (statusCode: number, headers: string[]): void {
    this.started = true
    // The upstream's Date is relayed; Node must not add a second one.
    this.res.sendDate = false
    this.res.writeHead(statusCode, headers)
  }

  onData (chunk: Buffer): boolean {
    const held = this.held
    if (held !== undefined) {
      held.chunks.push(chunk)
      held.bytes += chunk.length
      if (held.bytes <= COMMIT_HOLD_LIMIT) return true
      // Too large to hold: stream the rest (a break-off from here on cuts the connection).
      this.held = undefined
      this.writeHead(held.statusCode, held.headers)
      chunk = Buffer.concat(held.chunks, held.bytes)
    }
    const ok = this.res.write(chunk)
    if (!ok) this.res.once('drain', this.onDrain)
    return ok
  }

  onComplete (): void {
    this.done = true
    const held = this.held
    if (held !== undefined) {
      this.held = undefined
      this.writeHead(held.statusCode, held.headers)
      this.res.end(held.chunks.length === 1 ? held.chunks[0] : Buffer.concat(held.chunks, held.bytes))
      return
    }
    this.res.end()
  }

  onError (err: Error): void {
    if (this.done) return
    if (resendOnce(this.retryable, this.retried, this.sent, this.started || this.held !== undefined, err) && !this.res.destroyed) {
      // The upstream closed a pooled keep-alive connection as we wrote to it: resend once.
      this.retried = true
      this.sent = false
      this.forwarder.dispatch(this)
      return
    }
    this.done = true
    this.forwarder.fail(this, err)
  }
}
