/**
 * A strict, minimal reader of an HTTP/1.1 request head (RFC 9112 §2–§6), for the fast lane.
 *
 * The fast lane reads request heads before node:http does, so it must never accept what node:http's
 * parser (llhttp, as Node 20 runs it: not lenient) refuses: whatever llhttp refuses is refused here
 * too (`bad`: a 400 and the connection closed), and at once, also while the head is unfinished
 * (`unfinishedHeadProblem`). What llhttp accepts and the fast lane does not want to judge (CONNECT, a
 * target that is not origin-form, Expect, Upgrade, more fields than node:http keeps) is marked
 * `special` and left to node:http. Where both accept, this reader frames the request as llhttp does:
 * the same method, target, fields, body length and keep-alive decision (test/integration/fast-lane-llhttp.test.ts
 * compares the two). A few shapes llhttp tolerates are refused here on purpose: a request line with
 * doubled spaces or no version, HTTP versions other than 1.0 and 1.1, Content-Length values over 15
 * digits, and heads over node:http's size limit counted in raw bytes (llhttp counts the target,
 * names and values only, so it takes somewhat larger heads).
 *
 * Request smuggling needs two parties to disagree on where a message ends; the fast lane forwards
 * a body only when it is framed by exactly one Content-Length and no Transfer-Encoding, and writes a
 * fresh head for the upstream, so the upstream sees exactly the framing judged here.
 */
import { METHODS } from 'node:http'

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
  readonly transferEncoding: boolean
  /** `Connection: close` (or `Proxy-Connection: close`) was asked for. */
  readonly close: boolean
  /**
   * node:http's to handle: CONNECT, a target not in origin form (`*`, `http://…`), Expect, Upgrade
   * or a `Connection: upgrade` option, or more fields than node:http keeps.
   */
  readonly special: boolean
  /** Number of Host headers (HTTP/1.1 requires exactly one: RFC 9112 §3.2). */
  readonly hosts: number
  readonly host: string | undefined
  readonly contentEncoding: string | undefined
}

type HeadResult = RequestHead | { readonly bad: string }

/** The methods llhttp accepts in a request, exact case (Node's `http.METHODS`); any other token is refused. */
const METHOD_SET: ReadonlySet<string> = new Set(METHODS)
/** Every start of such a method: what an unfinished request line may begin with. */
const METHOD_STARTS: ReadonlySet<string> = new Set(METHODS.flatMap(m => Array.from(m, (_, i) => m.slice(0, i + 1))))
// RFC 9110 §5.6.2 token characters: llhttp's set for header names too.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
// Target characters llhttp accepts in every part of an origin-form target (path, query and `#…`
// alike): visible ASCII. Raw bytes >= 0x80, DEL, controls and whitespace are refused.
const TARGET = /^[\x21-\x7e]+$/
// Field values: visible characters, obs-text, space and tab only (RFC 9110 §5.5), as llhttp; DEL and a bare CR or LF are refused.
// eslint-disable-next-line no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/
const DIGITS = /^\d{1,15}$/
/**
 * node:http keeps the first ~1000 fields of a head and drops the rest unseen (`maxHeadersCount`,
 * 2000 names and values); a head with more goes to node:http, so both transports see the same list.
 */
const MAX_FIELDS = 1000

const SP = 0x20
const HT = 0x09
const CR = 0x0d
const LF = 0x0a
const COLON = 0x3a
const CONNECT = 'CONNECT'

function trimOws (s: string): string {
  let a = 0
  let b = s.length
  while (a < b && (s.charCodeAt(a) === SP || s.charCodeAt(a) === HT)) a++
  while (b > a && (s.charCodeAt(b - 1) === SP || s.charCodeAt(b - 1) === HT)) b--
  return a === 0 && b === s.length ? s : s.slice(a, b)
}

/**
 * Whether a Connection value names `option`, read as llhttp reads it: the value splits at commas,
 * and an element names an option when it is that word in any case with only spaces or tabs around
 * it (`close`, ` Close `; not `close;x`, `"close"` or `a close`).
 */
function namesOption (value: string, option: string): boolean {
  let start = 0
  for (;;) {
    let end = value.indexOf(',', start)
    if (end === -1) end = value.length
    let a = start
    let b = end
    while (a < b && (value.charCodeAt(a) === SP || value.charCodeAt(a) === HT)) a++
    while (b > a && (value.charCodeAt(b - 1) === SP || value.charCodeAt(b - 1) === HT)) b--
    if (b - a === option.length && value.slice(a, b).toLowerCase() === option) return true
    if (end === value.length) return false
    start = end + 1
  }
}

/** A head as it is read, line by line; the finished object is the `RequestHead`. */
class Head implements RequestHead {
  method = ''
  target = ''
  minor = 1
  rawHeaders: string[] = []
  contentLength = -1
  transferEncoding = false
  close = false
  special = false
  hosts = 0
  host: string | undefined = undefined
  contentEncoding: string | undefined = undefined
}

/** Reads the request line into `h`; returns what is wrong with it, if anything. */
function readRequestLine (line: string, h: Head): string | undefined {
  const sp1 = line.indexOf(' ')
  const sp2 = sp1 === -1 ? -1 : line.indexOf(' ', sp1 + 1)
  if (sp1 <= 0 || sp2 === -1 || line.indexOf(' ', sp2 + 1) !== -1) return 'Malformed request line'
  const method = line.slice(0, sp1)
  const target = line.slice(sp1 + 1, sp2)
  const version = line.slice(sp2 + 1)
  if (!METHOD_SET.has(method)) return 'Malformed request method'
  if (!TARGET.test(target)) return 'Malformed request target'
  if (version !== 'HTTP/1.1' && version !== 'HTTP/1.0') return 'Unsupported HTTP version; iceguard speaks HTTP/1.1'
  h.method = method
  h.target = target
  h.minor = version === 'HTTP/1.1' ? 1 : 0
  // CONNECT turns the connection into a tunnel and `*` or absolute-form targets follow rules of
  // their own in llhttp: node:http's, not checked here.
  if (method === CONNECT || target.charCodeAt(0) !== 0x2f) h.special = true
  return undefined
}

/** Reads the field lines of `text` (CRLF-separated, from `start`) into `h`; returns the first problem. */
function readFields (text: string, start: number, h: Head): string | undefined {
  const rawHeaders = h.rawHeaders
  let eol = start - 2
  while (eol !== -1) {
    const from = eol + 2
    eol = text.indexOf('\r\n', from)
    const field = eol === -1 ? text.slice(from) : text.slice(from, eol)
    const first = field.charCodeAt(0)
    // Line folding is obsolete and a classic smuggling vector (RFC 9112 §5.2): refused, as llhttp does.
    if (first === SP || first === HT) return 'Obsolete header line folding is not accepted'
    const colon = field.indexOf(':')
    if (colon <= 0) return 'Malformed header line'
    const name = field.slice(0, colon)
    // Whitespace before the colon is refused too (RFC 9112 §5.1): it is not a token character.
    if (!TOKEN.test(name)) return 'Malformed header name'
    const value = trimOws(field.slice(colon + 1))
    if (BAD_VALUE.test(value)) return 'Malformed header value'
    rawHeaders.push(name, value)
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === 'host') {
          h.hosts++
          h.host = value
        }
        break
      case 6:
        if (name.toLowerCase() === 'expect') h.special = true
        break
      case 7:
        if (name.toLowerCase() === 'upgrade') h.special = true
        break
      case 10:
        if (name.toLowerCase() === 'connection') readConnection(value, h)
        break
      case 14:
        if (name.toLowerCase() === 'content-length') {
          // Only plain digits: "1, 1", signs and spaces are all refused (RFC 9112 §6.3 item 5), and a
          // second Content-Length, even an equal one, as llhttp refuses it.
          if (!DIGITS.test(value)) return 'Invalid Content-Length'
          if (h.contentLength !== -1) return 'Content-Length appears more than once'
          // Both framings at once is how request smuggling starts (RFC 9112 §6.1): refused outright.
          if (h.transferEncoding) return 'Both Transfer-Encoding and Content-Length are present'
          h.contentLength = Number(value)
        }
        break
      case 16: {
        const lower = name.toLowerCase()
        if (lower === 'content-encoding') h.contentEncoding = h.contentEncoding === undefined ? value : `${h.contentEncoding},${value}`
        // llhttp reads Proxy-Connection as it reads Connection.
        else if (lower === 'proxy-connection') readConnection(value, h)
        break
      }
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') {
          if (h.contentLength !== -1) return 'Both Transfer-Encoding and Content-Length are present'
          h.transferEncoding = true
        }
        break
    }
  }
  if (rawHeaders.length > 2 * MAX_FIELDS) h.special = true
  return undefined
}

function readConnection (value: string, h: Head): void {
  if (namesOption(value, 'close')) h.close = true
  if (namesOption(value, 'upgrade')) h.special = true
}

/** Parses `head` (latin1, without the blank line that ends it, leading empty lines removed). */
export function parseRequestHead (head: string): HeadResult {
  const h = new Head()
  const eol = head.indexOf('\r\n')
  const bad = readRequestLine(eol === -1 ? head : head.slice(0, eol), h) ?? (eol === -1 ? undefined : readFields(head, eol + 2, h))
  return bad === undefined ? h : { bad }
}

/** How far an unfinished head has been checked; kept by its reader until the head is complete. */
export class HeadProgress {
  /** Where the first line not yet complete begins. */
  next = 0
  /** Where the check of that line stopped. */
  at = 0
  /** Before `at`: the spaces of the request line, or 1 once a field line's colon was seen. */
  seen = 0
  readonly head = new Head()
}

/**
 * What llhttp would already have refused in an unfinished head (no blank line yet), or undefined
 * while it may still turn out well. llhttp judges each byte as it comes, so a client that sent a
 * bad line (a bare LF for a line end, most often) and waits gets its 400 at once, not after the
 * idle timeout. Complete lines are read once each, into `progress`, as `parseRequestHead` reads
 * them; the unfinished last line byte by byte, each byte once.
 */
export function unfinishedHeadProblem (buf: Buffer, progress: HeadProgress): string | undefined {
  let next = progress.next
  for (let lf = buf.indexOf(LF, next); lf !== -1; lf = buf.indexOf(LF, next)) {
    // llhttp wants CRLF; its LF-alone leniency is off in Node.
    if (lf === next || buf[lf - 1] !== CR) return 'A line ends in a bare LF; HTTP/1.1 lines end in CRLF'
    const line = buf.toString('latin1', next, lf - 1)
    const bad = next === 0 ? readRequestLine(line, progress.head) : readFields(line, 0, progress.head)
    if (bad !== undefined) return bad
    next = lf + 1
  }
  if (next !== progress.next) {
    progress.next = next
    progress.at = next
    progress.seen = 0
  }
  // A CR at the very end may yet be followed by its LF.
  return lineStartProblem(buf, progress, buf[buf.length - 1] === CR ? buf.length - 1 : buf.length)
}

const byteTable = (re: RegExp): Uint8Array => Uint8Array.from({ length: 256 }, (_, b) => re.test(String.fromCharCode(b)) ? 1 : 0)
const TOKEN_BYTE = byteTable(TOKEN)
const TARGET_BYTE = byteTable(TARGET)
const BAD_VALUE_BYTE = byteTable(BAD_VALUE)

/** Checks the unfinished line's bytes from `progress.at` to `end` by the rules `readRequestLine` and `readFields` apply to whole lines. */
function lineStartProblem (buf: Buffer, p: HeadProgress, end: number): string | undefined {
  const start = p.next
  for (let i = p.at; i < end; i++) {
    const b = buf[i] as number
    if (b === CR) return 'A CR is not followed by LF'
    if (start === 0) {
      // The request line: method, space, target, space, version.
      if (b === SP) {
        if (++p.seen > 2 || i === start || buf[i - 1] === SP) return 'Malformed request line'
        if (p.seen === 1 && !METHOD_SET.has(buf.toString('latin1', start, i))) return 'Malformed request method'
      } else if (p.seen === 0) {
        if (!METHOD_STARTS.has(buf.toString('latin1', start, i + 1))) return 'Malformed request method'
      } else if (p.seen === 1) {
        if (TARGET_BYTE[b] === 0) return 'Malformed request target'
      } else {
        const version = buf.toString('latin1', buf.lastIndexOf(SP, i) + 1, i + 1)
        if (!'HTTP/1.1'.startsWith(version) && !'HTTP/1.0'.startsWith(version)) return 'Unsupported HTTP version; iceguard speaks HTTP/1.1'
      }
    } else if (i === start && (b === SP || b === HT)) {
      return 'Obsolete header line folding is not accepted'
    } else if (p.seen === 0) {
      // A field's name, up to its colon.
      if (b === COLON) {
        if (i === start) return 'Malformed header line'
        p.seen = 1
      } else if (TOKEN_BYTE[b] === 0) return 'Malformed header name'
    } else if (BAD_VALUE_BYTE[b] === 1) return 'Malformed header value'
  }
  p.at = end
  return undefined
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
