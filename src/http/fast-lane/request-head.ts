/**
 * A strict, minimal reader of an HTTP/1.1 request head (RFC 9112 §2–§6), for the fast lane.
 *
 * It only has to be right about what the fast lane forwards itself. Anything it is unsure of is
 * either refused (`bad`: a 400 and the connection closed) when a careful proxy must refuse it, or
 * left to node:http (`handover` in the caller) when node:http handles it today. Request smuggling
 * needs two parties to disagree on where a message ends; the fast lane forwards a body only when
 * it is framed by exactly one Content-Length and no Transfer-Encoding, and writes a fresh head for
 * the upstream, so the upstream sees exactly the framing judged here.
 */

export interface RequestHead {
  readonly method: string
  /** The request target exactly as received. */
  readonly target: string
  /** 1 for HTTP/1.1, 0 for HTTP/1.0. */
  readonly minor: number
  /** Header names and values as received (values without surrounding whitespace), flat. */
  readonly rawHeaders: string[]
  /** The body length, or -1 without a Content-Length. */
  readonly contentLength: number
  /** Content-Length appeared more than once with the same value (left to node:http). */
  readonly repeatedLength: boolean
  readonly transferEncoding: boolean
  /** `Connection: close` was asked for. */
  readonly close: boolean
  /** Expect, Upgrade or a `Connection: upgrade` token: node:http's to handle. */
  readonly special: boolean
  /** Number of Host headers (HTTP/1.1 requires exactly one: RFC 9112 §3.2). */
  readonly hosts: number
  readonly host: string | undefined
  readonly contentEncoding: string | undefined
}

export type HeadResult = RequestHead | { readonly bad: string }

// RFC 9110 §5.6.2 token characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// A target has no whitespace or control characters (RFC 9112 §3.2); anything else is refused.
const TARGET = /^[\x21-\x7e\x80-\xff]+$/
// Field values: visible characters, obs-text, space and tab only (RFC 9110 §5.5); a bare CR or LF is refused.
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/
const DIGITS = /^\d{1,15}$/

function trimOws (s: string): string {
  let a = 0
  let b = s.length
  while (a < b && (s.charCodeAt(a) === 0x20 || s.charCodeAt(a) === 0x09)) a++
  while (b > a && (s.charCodeAt(b - 1) === 0x20 || s.charCodeAt(b - 1) === 0x09)) b--
  return a === 0 && b === s.length ? s : s.slice(a, b)
}

/** Parses `head` (latin1, without the blank line that ends it, leading empty lines removed). */
export function parseRequestHead (head: string): HeadResult {
  let eol = head.indexOf('\r\n')
  const line = eol === -1 ? head : head.slice(0, eol)
  const sp1 = line.indexOf(' ')
  const sp2 = sp1 === -1 ? -1 : line.indexOf(' ', sp1 + 1)
  if (sp1 <= 0 || sp2 === -1 || line.indexOf(' ', sp2 + 1) !== -1) return { bad: 'Malformed request line' }
  const method = line.slice(0, sp1)
  const target = line.slice(sp1 + 1, sp2)
  const version = line.slice(sp2 + 1)
  if (!TOKEN.test(method)) return { bad: 'Malformed request method' }
  if (!TARGET.test(target)) return { bad: 'Malformed request target' }
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') return { bad: 'Unsupported HTTP version; iceguard speaks HTTP/1.1' }

  const rawHeaders: string[] = []
  let contentLength = -1
  let repeatedLength = false
  let transferEncoding = false
  let close = false
  let special = false
  let hosts = 0
  let host: string | undefined
  let contentEncoding: string | undefined
  while (eol !== -1) {
    const start = eol + 2
    eol = head.indexOf('\r\n', start)
    const field = eol === -1 ? head.slice(start) : head.slice(start, eol)
    const first = field.charCodeAt(0)
    // Line folding is obsolete and a classic smuggling vector (RFC 9112 §5.2): refused.
    if (first === 0x20 || first === 0x09) return { bad: 'Obsolete header line folding is not accepted' }
    const colon = field.indexOf(':')
    if (colon <= 0) return { bad: 'Malformed header line' }
    const name = field.slice(0, colon)
    if (!TOKEN.test(name)) return { bad: 'Malformed header name' }
    const value = trimOws(field.slice(colon + 1))
    if (BAD_VALUE.test(value)) return { bad: 'Malformed header value' }
    rawHeaders.push(name, value)
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'host') {
          hosts++
          host = value
        }
        break
      case 6:
        if (name.toLowerCase() === 'expect') special = true
        break
      case 7:
        if (name.toLowerCase() === 'upgrade') special = true
        break
      case 10:
        if (name.toLowerCase() === 'connection') {
          const tokens = value.toLowerCase()
          if (/(^|[\s,])close($|[\s,])/.test(tokens)) close = true
          if (/(^|[\s,])upgrade($|[\s,])/.test(tokens)) special = true
        }
        break
      case 14:
        if (name.toLowerCase() === 'content-length') {
          // Only plain digits: "1, 1", signs and spaces are all refused (RFC 9112 §6.3 item 5).
          if (!DIGITS.test(value)) return { bad: 'Invalid Content-Length' }
          const n = Number(value)
          if (contentLength !== -1) {
            if (n !== contentLength) return { bad: 'Conflicting Content-Length headers' }
            repeatedLength = true
          }
          contentLength = n
        }
        break
      case 16:
        if (name.toLowerCase() === 'content-encoding') contentEncoding = contentEncoding === undefined ? value : `${contentEncoding},${value}`
        break
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') transferEncoding = true
        break
    }
  }
  // Both framings at once is how request smuggling starts (RFC 9112 §6.1): refused outright.
  if (transferEncoding && contentLength !== -1) return { bad: 'Both Transfer-Encoding and Content-Length are present' }
  return {
    method,
    target,
    minor: version === 'HTTP/1.1' ? 1 : 0,
    rawHeaders,
    contentLength,
    repeatedLength,
    transferEncoding,
    close,
    special,
    hosts,
    host,
    contentEncoding
  }
}

/** Fields node:http keeps the first of when repeated (`IncomingMessage.headers`). */
const FIRST_ONLY: ReadonlySet<string> = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host',
  'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards',
  'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent'
])

/**
 * The head's fields as node:http's `IncomingMessage.headers` would hold them (lower-case names; a
 * repeated field joined with ", ", cookies with "; ", Set-Cookie kept as a list, and the first of
 * the singleton fields kept), so the gate reads a fast-lane request as it reads one from Fastify.
 */
export function headersObject (rawHeaders: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase()
    const value = rawHeaders[i + 1] as string
    const prev = out[name]
    if (name === 'set-cookie') out[name] = prev === undefined ? [value] : [...(prev as string[]), value]
    else if (prev === undefined) out[name] = value
    else if (FIRST_ONLY.has(name)) continue
    else out[name] = `${prev as string}${name === 'cookie' ? '; ' : ', '}${value}`
  }
  return out
}
