/**
 * An answer body as the pieces it arrived in. Big answers (a loadTable of thousands of schemas is
 * tens of MB) are read by the gate from the pieces and relayed to the client as they are, so
 * joining them into one buffer is left to the callers that want one (`body`, joined once, on
 * first use).
 */
export interface UpstreamResponse {
  readonly statusCode: number
  /** Lower-case names; hop-by-hop headers removed; a repeated header is an array. */
  readonly headers: Record<string, string | string[]>
  /** The body in one buffer (joined from `chunks` on first use when it came in several). */
  readonly body: Buffer
  /**
   * The body as the pieces it arrived in, transfer coding removed: what relays and the gate read
   * (absent: `body` is the one piece).
   */
  readonly chunks?: readonly Buffer[]
}

/** An answer whose body is `chunks` (`length` bytes in all, possibly no chunk at all). */
export function chunkedAnswer (statusCode: number, headers: Record<string, string | string[]>,
  chunks: readonly Buffer[], length: number): UpstreamResponse {
  if (chunks.length === 1) return { statusCode, headers, body: chunks[0] as Buffer, chunks }
  return new PiecesAnswer(statusCode, headers, chunks, length)
}

/**
 * The getter lives on the class, not on an object literal: with a literal's accessor (a new
 * closure per answer, holding the pieces) large answers stayed alive longer and V8 ran two to
 * three times as many full collections (docs/performance.md).
 */
class PiecesAnswer implements UpstreamResponse {
  readonly statusCode: number
  readonly headers: Record<string, string | string[]>
  readonly chunks: readonly Buffer[]
  readonly #length: number
  #joined: Buffer | undefined

  constructor (statusCode: number, headers: Record<string, string | string[]>, chunks: readonly Buffer[], length: number) {
    this.statusCode = statusCode
    this.headers = headers
    this.chunks = chunks
    this.#length = length
  }

  get body (): Buffer {
    this.#joined ??= this.chunks.length === 0 ? Buffer.alloc(0) : Buffer.concat(this.chunks, this.#length)
    return this.#joined
  }
}
