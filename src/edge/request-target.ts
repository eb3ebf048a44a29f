/**
 * The canonical form of a request target, written once for both transports (the fast lane and
 * node:http), before anything is routed or forwarded.
 *
 * A gate in front of a catalog holds only if both read a path the same way. They need not share a
 * router if the gate forwards one spelling that every router reads alike; that spelling is this
 * function's output. The routers in question (sources in docs/security.md):
 * - the Iceberg REST fixture (Jetty): refuses `#`, `//`, `%2F`, `%2e` and `\`, and compares route
 *   words ignoring case (`Route.java` `matches`, `equalsIgnoreCase`);
 * - Quarkus on Vert.x (Polaris, Nessie): decodes percent-encoded unreserved characters, removes dot
 *   segments and collapses `//` before routing (`RFC3986.normalizePath`), drops `;params`;
 * - hyper/axum (Lakekeeper): takes `#` in the request line and cuts the path there.
 *
 * So, in the path:
 * - refused: a fragment (`#`, anywhere in the target), bytes outside visible ASCII (controls, space,
 *   DEL, >= 0x80: llhttp refuses them and the fast lane must not be more lenient), a backslash,
 *   a `;` path parameter, an empty segment (`//`, a trailing `/`), a malformed `%` escape, and a
 *   dot segment (`.`, `..`), also percent-encoded, double-encoded or hidden behind an encoded
 *   slash or backslash (`%2e%2e`, `%252e`, `a%2F..%2Fb`). None of these is written by an Iceberg
 *   client: Java, PyIceberg and iceberg-js percent-encode every identifier.
 * - decoded: percent-encoded unreserved characters (RFC 3986 §2.3: ALPHA / DIGIT / `-` `.` `_` `~`),
 *   which RFC 3986 §6.2.2.2 says are the same character. Java's `URLEncoder` writes `~` as `%7E`
 *   (apache/iceberg `RESTUtil.encodeString`), so real names travel this way.
 * - rewritten: a raw `+` becomes `%20`. The Java client writes a space in a name as `+` (apache/iceberg
 *   `RESTUtil.encodeString`, `URLEncoder`) and the REST fixture reads it back as a space
 *   (`URLDecoder`), while JAX-RS `@PathParam` (Polaris, Nessie) and axum `Path` (Lakekeeper) would
 *   read a plus. `%20` is a space to all of them, so the table the gate judges is the one the catalog
 *   writes; a client that means a plus writes `%2B` (PyIceberg, iceberg-js, and Java itself).
 * - kept as received: every other escape (`%2F` stays one segment, `%1F` separates namespace
 *   levels, `%25` is a percent sign), and the query, byte for byte (it is not part of routing).
 *
 * Route words are lower-cased by the classifier (src/edge/classify.ts), which knows where they are.
 */

interface TargetRefusal {
  /** Completes "the request target …": what is wrong, for the client's error message. */
  readonly refused: string
}

// RFC 3986 §2.3 unreserved, as a lookup by character code.
const UNRESERVED = new Uint8Array(128)
for (let c = 0x30; c <= 0x39; c++) UNRESERVED[c] = 1
for (let c = 0x41; c <= 0x5a; c++) UNRESERVED[c] = 1
for (let c = 0x61; c <= 0x7a; c++) UNRESERVED[c] = 1
for (const c of '-._~') UNRESERVED[c.charCodeAt(0)] = 1

const SLASH = 0x2f
const PERCENT = 0x25
const DOT = 0x2e
const QUESTION = 0x3f
const HASH = 0x23
const SEMICOLON = 0x3b
const BACKSLASH = 0x5c
const PLUS = 0x2b

function hexValue (c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  const l = c | 0x20
  return l >= 0x61 && l <= 0x66 ? l - 0x61 + 10 : -1
}

/**
 * The target to forward (the same string when `raw` is already canonical: nothing is allocated
 * then), or why it is refused. `raw` is the request target as received, in origin form.
 */
export function canonicalTarget (raw: string): string | TargetRefusal {
  if (raw.charCodeAt(0) !== SLASH) return { refused: 'is not an absolute path (origin form)' }
  const length = raw.length
  let pathEnd = length
  let decode = false
  let plus = false
  let segStart = 1
  // What the current segment holds that could make it a dot segment: a dot, or an escape of a dot,
  // of `%` (decoded again, it could become one), or of a separator some server splits at.
  let segDots = false
  let segEscapes = false
  for (let i = 1; i <= length; i++) {
    const c = i === length ? SLASH : raw.charCodeAt(i)
    if (c === SLASH || c === QUESTION) {
      if (i === segStart) return { refused: i === length || c === QUESTION ? 'ends with "/" (an empty segment)' : 'has an empty segment ("//")' }
      if ((segDots || segEscapes) && isDotSegment(raw, segStart, i, segEscapes)) {
        return { refused: `has a dot segment ("${printable(raw.slice(segStart, i))}"), which would resolve to another path` }
      }
      if (c === QUESTION || i === length) {
        pathEnd = i
        break
      }
      segStart = i + 1
      segDots = false
      segEscapes = false
      continue
    }
    if (c <= 0x20 || c >= 0x7f) return { refused: 'holds a control character, a space or a byte outside ASCII; percent-encode it' }
    if (c === HASH) return { refused: 'has a fragment ("#"); clients never send one, and routers disagree on where the path ends' }
    if (c === BACKSLASH) return { refused: 'has a backslash; percent-encode it as %5C' }
    if (c === SEMICOLON) return { refused: 'has a ";" path parameter; percent-encode ";" as %3B' }
    if (c === DOT) segDots = true
    else if (c === PLUS) plus = true
    else if (c === PERCENT) {
      const hi = i + 2 < length ? hexValue(raw.charCodeAt(i + 1)) : -1
      const lo = hi === -1 ? -1 : hexValue(raw.charCodeAt(i + 2))
      if (lo === -1) return { refused: `has a malformed percent escape ("${printable(raw.slice(i, i + 3))}")` }
      const v = hi * 16 + lo
      if (v < 0x80 && UNRESERVED[v] === 1) decode = true
      if (v === DOT || v === PERCENT || v === SLASH || v === BACKSLASH || v === SEMICOLON) segEscapes = true
      i += 2
    }
  }
  // The query: kept byte for byte, but no fragment and nothing llhttp refuses.
  for (let i = pathEnd + 1; i < length; i++) {
    const c = raw.charCodeAt(i)
    if (c <= 0x20 || c >= 0x7f) return { refused: 'holds a control character, a space or a byte outside ASCII; percent-encode it' }
    if (c === HASH) return { refused: 'has a fragment ("#"); clients never send one, and routers disagree on where the path ends' }
  }
  return decode || plus ? rewritePath(raw, pathEnd) : raw
}

/**
 * `raw` with, in the path (before `pathEnd`), each percent-encoded unreserved character decoded
 * and each `+` written as `%20`.
 */
function rewritePath (raw: string, pathEnd: number): string {
  let out = ''
  let from = 0
  for (let i = 1; i < pathEnd; i++) {
    const c = raw.charCodeAt(i)
    if (c === PLUS) {
      out += raw.slice(from, i) + '%20'
      from = i + 1
    } else if (c === PERCENT) {
      const v = hexValue(raw.charCodeAt(i + 1)) * 16 + hexValue(raw.charCodeAt(i + 2))
      if (v < 0x80 && UNRESERVED[v] === 1) {
        out += raw.slice(from, i) + String.fromCharCode(v)
        from = i + 3
      }
      i += 2
    }
  }
  return out + raw.slice(from)
}

/**
 * Whether the segment `raw[start, end)` is a dot segment, or decodes to one (`escapes`: it has an
 * escape of `.`, `%`, `/`, `\` or `;`; without, only a bare `.` or `..` is one): percent-decoded again
 * and again while that changes it (double encoding, `%252e`, and deeper: no name needs it), split at encoded slashes and
 * backslashes (some servers decode them before resolving dot segments) and cut at an encoded `;`
 * (servlet containers strip path parameters before resolving).
 */
function isDotSegment (raw: string, start: number, end: number, escapes: boolean): boolean {
  const len = end - start
  if (!escapes) return (len === 1 || len === 2) && raw.charCodeAt(start) === DOT && raw.charCodeAt(end - 1) === DOT
  let text = raw.slice(start, end)
  // Each round shortens the text, so this ends.
  for (;;) {
    for (const piece of text.split(/[/\\]/)) {
      const semi = piece.indexOf(';')
      const bare = semi === -1 ? piece : piece.slice(0, semi)
      if (bare === '.' || bare === '..') return true
    }
    if (!text.includes('%')) return false
    const decoded = text.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    if (decoded === text) return false
    text = decoded
  }
}

/** A piece of the target fit for an error message: no control characters, bounded. */
export function printable (s: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f-\uffff]/g, '?')
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat
}
