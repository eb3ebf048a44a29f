/**
 * Follows a chunked body (RFC 9112 §7.1) as it streams past, without copying it, to find where the
 * message ends. The bytes themselves are relayed unchanged; only the sizes are read. A size that is
 * not hex, or a chunk not followed by CRLF, is an invalid answer.
 */

// Scanner states.
const S_Size = 0
const S_Ext = 1
const S_SizeLf = 2
const S_Data = 3
const S_DataCr = 4
const S_DataLf = 5
const S_TrailerStart = 6
const S_Trailer = 7
const S_TrailerLf = 8
const S_EndLf = 9

/** Longest chunk-size accepted: 13 hex digits stay below 2^53. */
const MAX_SIZE_DIGITS = 13

export class ChunkedScanner {
  #state = S_Size
  #remaining = 0
  #digits = 0

  /**
   * Scans `buf` from `start`. Returns the index just past the end of the message when it ends in
   * this buffer, -1 when more is needed, or -2 when the body is malformed.
   */
  scan (buf: Buffer, start = 0): number {
    let i = start
    const n = buf.length
    while (i < n) {
      switch (this.#state) {
        case S_Data: {
          const take = Math.min(this.#remaining, n - i)
          i += take
          this.#remaining -= take
          if (this.#remaining === 0) this.#state = S_DataCr
          continue
        }
        case S_Size: {
          const c = buf[i] as number
          const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1
          if (d !== -1) {
            if (++this.#digits > MAX_SIZE_DIGITS) return -2
            this.#remaining = this.#remaining * 16 + d
          } else if (this.#digits === 0) {
            return -2
          } else if (c === 0x3b) {
            this.#state = S_Ext
          } else if (c === 0x0d) {
            this.#state = S_SizeLf
          } else {
            return -2
          }
          break
        }
        case S_Ext: {
          const c = buf[i] as number
          if (c === 0x0d) this.#state = S_SizeLf
          else if (c === 0x0a || (c < 0x20 && c !== 0x09)) return -2
          break
        }
        case S_SizeLf:
          if (buf[i] !== 0x0a) return -2
          this.#digits = 0
          this.#state = this.#remaining === 0 ? S_TrailerStart : S_Data
          break
        case S_DataCr:
          if (buf[i] !== 0x0d) return -2
          this.#state = S_DataLf
          break
        case S_DataLf:
          if (buf[i] !== 0x0a) return -2
          this.#state = S_Size
          break
        case S_TrailerStart:
          if (buf[i] === 0x0d) this.#state = S_EndLf
          else this.#state = S_Trailer
          break
        case S_Trailer:
          if (buf[i] === 0x0d) this.#state = S_TrailerLf
          else if (buf[i] === 0x0a) return -2
          break
        case S_TrailerLf:
          if (buf[i] !== 0x0a) return -2
          this.#state = S_TrailerStart
          break
        case S_EndLf:
          if (buf[i] !== 0x0a) return -2
          this.#state = S_Size
          this.#remaining = 0
          return i + 1
      }
      i++
    }
    return -1
  }
}
