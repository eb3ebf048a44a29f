/**
 * Reads the upstream's response head (RFC 9112 §4, §6.3) and decides how its body is delimited.
 * The head is rewritten for the client (hop-by-hop fields dropped, see src/upstream/headers.ts);
 * the body is relayed as it comes.
 */

import { codedError } from './coded-error.js'

export type Framing = 'none' | 'length' | 'chunked' | 'close'

/** The blank line that ends an HTTP/1.1 head. */
export const HEAD_END = Buffer.from('\r\n\r\n', 'latin1')
/** Largest upstream response head accepted. */
const MAX_RESPONSE_HEAD = 64 * 1024

export interface ResponseHead {
  readonly status: number
  readonly rawHeaders: string[]
  readonly framing: Framing
  /** Body length for `length` framing. */
  readonly length: number
  /** The upstream connection can carry another request once this answer is read. */
  readonly reusable: boolean
  /** The upstream's `Keep-Alive: timeout=N` hint in ms, or -1. */
  readonly keepAliveMs: number
}

export type ResponseResult = ResponseHead | { readonly invalid: string }

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/
const DIGITS = /^\d{1,15}$/

/** `head` without its blank line; `noBody` for answers to HEAD. */
export function parseResponseHead (head: string, noBody: boolean): ResponseResult {
  let eol = head.indexOf('\r\n')
  const m = STATUS_LINE.exec(eol === -1 ? head : head.slice(0, eol))
  if (m === null) return { invalid: 'malformed status line' }
  const status = Number(m[2])
  let reusable = m[1] === '1'
  const rawHeaders: string[] = []
  let length = -1
  let chunked = false
  let keepAliveMs = -1
  while (eol !== -1) {
    const start = eol + 2
    eol = head.indexOf('\r\n', start)
    const field = eol === -1 ? head.slice(start) : head.slice(start, eol)
    const colon = field.indexOf(':')
    const first = field.charCodeAt(0)
    if (colon <= 0 || first === 0x20 || first === 0x09) return { invalid: 'malformed header line' }
    const name = field.slice(0, colon)
    const value = field.slice(colon + 1).trim()
    rawHeaders.push(name, value)
    const lower = name.length === 10 || name.length === 14 || name.length === 17 ? name.toLowerCase() : ''
    if (lower === 'content-length') {
      if (!DIGITS.test(value) || (length !== -1 && Number(value) !== length)) return { invalid: 'invalid Content-Length' }
      length = Number(value)
    } else if (lower === 'transfer-encoding') {
      // Chunked must be the final coding (RFC 9112 §6.3 item 4); otherwise the body runs to close.
      // Any other transfer coding would reach the client undecoded once the header is dropped:
      // such an answer is refused rather than relayed wrong (no catalog sends one).
      if (value.toLowerCase().trim() !== 'chunked') return { invalid: `unsupported Transfer-Encoding "${value}"` }
      chunked = true
    } else if (lower === 'connection') {
      const tokens = value.toLowerCase()
      if (/(^|[\s,])close($|[\s,])/.test(tokens)) reusable = false
      else if (m[1] === '0' && /(^|[\s,])keep-alive($|[\s,])/.test(tokens)) reusable = true
    } else if (name.length === 10 && name.toLowerCase() === 'keep-alive') {
      const t = /timeout=(\d+)/i.exec(value)
      if (t?.[1] !== undefined) keepAliveMs = Number(t[1]) * 1000
    }
  }
  if (noBody || status === 204 || status === 304 || status < 200) {
    return { status, rawHeaders, framing: 'none', length: 0, reusable, keepAliveMs }
  }
  if (chunked) {
    // With Transfer-Encoding, Content-Length is ignored (RFC 9112 §6.3 item 3) and the
    // connection must not be reused after it.
    if (length !== -1) reusable = false
    return { status, rawHeaders, framing: 'chunked', length: -1, reusable, keepAliveMs }
  }
  // An empty body is complete with the head: no byte will come to say so.
  if (length === 0) return { status, rawHeaders, framing: 'none', length: 0, reusable, keepAliveMs }
  if (length !== -1) return { status, rawHeaders, framing: 'length', length, reusable, keepAliveMs }
  return { status, rawHeaders, framing: 'close', length: -1, reusable: false, keepAliveMs }
}

export type HeadScan =
  /** The final answer's head, and the bytes after it. */
  | { readonly head: ResponseHead, readonly rest: Buffer }
  /** No final head yet: the bytes to keep for the next read (interim answers dropped), if any. */
  | { readonly more: Buffer | undefined }
  | { readonly error: Error }

/**
 * Finds the final response head in the bytes read so far. 1xx interim answers (103 Early Hints)
 * are skipped, never relayed; 101 is never asked for. `buf` may live in a reused read buffer:
 * what `more` returns must be copied to be kept.
 */
export function scanResponseHead (buf: Buffer, noBody: boolean): HeadScan {
  for (;;) {
    const end = buf.indexOf(HEAD_END)
    if (end === -1) {
      if (buf.length > MAX_RESPONSE_HEAD) return { error: codedError('the upstream response head is too large', 'UND_ERR_HEADERS_OVERFLOW') }
      return { more: buf }
    }
    const res = parseResponseHead(buf.toString('latin1', 0, end), noBody)
    if ('invalid' in res) return { error: codedError(`invalid upstream response: ${res.invalid}`, 'HPE_INVALID') }
    buf = buf.subarray(end + 4)
    if (res.status >= 200) return { head: res, rest: buf }
    if (res.status === 101) return { error: codedError('the upstream switched protocols unasked', 'HPE_INVALID') }
    if (buf.length === 0) return { more: undefined }
  }
}
