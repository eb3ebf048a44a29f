/**
 * Follows a chunked body (RFC 9112 §7.1) as it streams past, without copying it, to find where the
 * message ends. The bytes themselves are relayed unchanged; only the sizes are read. A size that is
 * not hex, or a chunk not followed by CRLF, is an invalid answer. A reader that wants the payload
 * (the upstream client) is shown each run of chunk data as it passes (`scan`'s `data`).
 */

/** Receives the bytes `buf[from, to)` of chunk data, in order; `buf` is only valid during the call. */
export type ChunkData = (buf: Buffer, from: number, to: number) => void

// Scanner states.
const S_SIZE = 0
const S_EXT = 1
const S_SIZE_LF = 2
const S_DATA = 3
const S_DATA_CR = 4
const S_DATA_LF = 5
const S_TRAILER_START = 6
const S_TRAILER = 7
const S_TRAILER_LF = 8
const S_END_LF = 9

/** Longest chunk-size accepted: 13 hex digits stay below 2^53. */
const MAX_SIZE_DIGITS = 13

export class ChunkedScanner {
  #state = S_SIZE
  #remaining = 0
  #digits = 0

  /**
   * Scans `buf` from `start`. Returns the index just past the end of the message when it ends in
   * this buffer, -1 when more is needed, or -2 when the body is malformed.
   */
  scan (buf: Buffer, start = 0, data?: ChunkData): number {
    let i = start
    const n = buf.length
    while (i < n) {
      switch (this.#state) {
        case S_DATA: {
          const take = Math.min(this.#remaining, n - i)
          if (data !== undefined) data(buf, i, i + take)
          i += take
          this.#remaining -= take
          if (this.#remaining === 0) this.#state = S_DATA_CR
          continue
        }
        case S_SIZE: {
          const c = buf[i] as number
          const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1
          if (d !== -1) {
            if (++this.#digits > MAX_SIZE_DIGITS) return -2
            this.#remaining = this.#remaining * 16 + d
          } else if (this.#digits === 0) {
            return -2
          } else if (c === 0x3b) {
            this.#state = S_EXT
          } else if (c === 0x0d) {
            this.#state = S_SIZE_LF
          } else {
            return -2
          }
          break
        }
        case S_EXT: {
          const c = buf[i] as number
          if (c === 0x0d) this.#state = S_SIZE_LF
          else if (c === 0x0a || (c < 0x20 && c !== 0x09)) return -2
          break
        }
        case S_SIZE_LF:
          if (buf[i] !== 0x0a) return -2
          this.#digits = 0
          this.#state = this.#remaining === 0 ? S_TRAILER_START : S_DATA
          break
        case S_DATA_CR:
          if (buf[i] !== 0x0d) return -2
          this.#state = S_DATA_LF
          break
        case S_DATA_LF:
          if (buf[i] !== 0x0a) return -2
          this.#state = S_SIZE
          break
        case S_TRAILER_START:
          if (buf[i] === 0x0d) this.#state = S_END_LF
          else this.#state = S_TRAILER
          break
        case S_TRAILER:
          if (buf[i] === 0x0d) this.#state = S_TRAILER_LF
          else if (buf[i] === 0x0a) return -2
          break
        case S_TRAILER_LF:
          if (buf[i] !== 0x0a) return -2
          this.#state = S_TRAILER_START
          break
        case S_END_LF:
          if (buf[i] !== 0x0a) return -2
          this.#state = S_SIZE
          this.#remaining = 0
          return i + 1
      }
      i++
    }
    return -1
  }
}
