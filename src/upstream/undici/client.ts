/**
 * The buffered upstream client: for calls whose answer the proxy reads (the `/v1/config` rewrite,
 * the gate's base-metadata load, forwarding a commit the gate has read).
 *
 * Transport failures are thrown as `UpstreamError` from the catalogue, with `sent` telling whether
 * the request reached the upstream. POSTs are never retried; a GET or HEAD is resent once when a
 * pooled keep-alive connection turns out to be dead.
 */
import type { Dispatcher } from 'undici'
import { isResendable, resendOnce, upstreamError } from '../exchange-rules.js'
import { forwardRequestHeaders, headersToObject, relayResponseHeaders } from '../headers.js'
import { chunkedAnswer, type UpstreamResponse } from '../answer-body.js'

export type { UpstreamResponse }

export interface UpstreamRequest {
  readonly method: string
  /** Path and query to send, without the upstream base path (a client's: its canonical target, src/edge/classify.ts). */
  readonly path: string
  /** A flat `[name, value, …]` list or an object; hop-by-hop headers and Content-Length are dropped. */
  readonly headers?: readonly string[] | Readonly<Record<string, string | readonly string[] | undefined>>
  readonly body?: Buffer
  /** A write whose outcome matters: failures after sending are "commit state unknown". */
  readonly commit?: boolean
}

export interface UpstreamClient {
  request (req: UpstreamRequest): Promise<UpstreamResponse>
}

export function flatHeaders (headers: UpstreamRequest['headers'], adminToken?: string): string[] {
  if (headers === undefined) return []
  let flat: string[]
  if (Array.isArray(headers)) {
    flat = headers as string[]
  } else {
    flat = []
    for (const [name, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
      if (value === undefined) continue
      if (typeof value === 'string') flat.push(name, value)
      else for (const v of value) flat.push(name, v)
    }
  }
  // Only filtering here: the caller decides about X-Forwarded-* (it knows the client).
  return forwardRequestHeaders(flat, undefined, true, adminToken)
}

export interface UpstreamClientOptions {
  readonly basePath: string
  readonly retryAfter: number
  /** An answer larger than this is abandoned as a bad response: a broken or hostile upstream cannot exhaust memory. */
  readonly maxResponseBytes?: number
  /** The static admin token: an `Authorization` carrying it is not sent. */
  readonly adminToken?: string | undefined
}

export function createUpstreamClient (dispatcher: Dispatcher, options: UpstreamClientOptions): UpstreamClient {
  const maxResponseBytes = options.maxResponseBytes ?? Number.POSITIVE_INFINITY
  return {
    request (req: UpstreamRequest): Promise<UpstreamResponse> {
      return new Promise((resolve, reject) => {
        const handler = new CollectHandler(resolve, reject, req.commit === true, options.retryAfter,
          isResendable(req.method, req.body !== undefined), maxResponseBytes)
        handler.run = () => {
          try {
            dispatcher.dispatch({
              method: req.method as Dispatcher.HttpMethod,
              path: options.basePath + req.path,
              headers: flatHeaders(req.headers, options.adminToken),
              body: req.body ?? null
            }, handler)
          } catch (err) {
            handler.onError(err as Error)
          }
        }
        handler.run()
      })
    }
  }
}

class CollectHandler implements Dispatcher.DispatchHandler {
  readonly #resolve: (res: UpstreamResponse) => void
  readonly #reject: (err: Error) => void
  readonly #commit: boolean
  readonly #retryAfter: number
  readonly #retryable: boolean
  readonly #maxBytes: number
  #abort: ((err: Error) => void) | undefined
  #received = 0
  run: () => void = () => {}
  sent = false
  retried = false
  statusCode = 0
  rawHeaders: Buffer[] = []
  chunks: Buffer[] = []

  constructor (resolve: (res: UpstreamResponse) => void, reject: (err: Error) => void, commit: boolean, retryAfter: number, retryable: boolean, maxBytes: number) {
    this.#resolve = resolve
    this.#reject = reject
    this.#commit = commit
    this.#retryAfter = retryAfter
    this.#retryable = retryable
    this.#maxBytes = maxBytes
  }

  onConnect (abort: (err: Error) => void): void {
    this.sent = true
    this.#abort = abort
  }

  onHeaders (statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true
    this.statusCode = statusCode
    this.rawHeaders = rawHeaders
    return true
  }

  onData (chunk: Buffer): boolean {
    this.#received += chunk.length
    if (this.#received > this.#maxBytes) {
      this.chunks = []
      this.#abort?.(Object.assign(new Error(`answer larger than ${this.#maxBytes} bytes`), { code: 'ICEGUARD_RESPONSE_TOO_LARGE' }))
      return false
    }
    this.chunks.push(chunk)
    return true
  }

  onComplete (): void {
    // undici hands each chunk over for good (a slice of its read): kept as they are, not joined.
    this.#resolve(chunkedAnswer(this.statusCode, headersToObject(relayResponseHeaders(this.rawHeaders)), this.chunks, this.#received))
  }

  onError (err: Error): void {
    if (resendOnce(this.#retryable, this.retried, this.sent, this.statusCode !== 0, err)) {
      this.retried = true
      this.sent = false
      this.chunks = []
      this.#received = 0
      this.run()
      return
    }
    this.#reject(upstreamError(err, this.sent, this.#commit, this.#retryAfter))
  }
}
