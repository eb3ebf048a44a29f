/**
 * Decides from the raw bytes of a commit body whether the schema gate must look at it.
 *
 * Most commits only add snapshots or touch properties; they can be forwarded without parsing.
 * The scanner finds every `"action"` key and reads its string value, comparing in lower case
 * because Java's `MetadataUpdateParser` lower-cases the action (`toLowerCase(Locale.ROOT)`).
 * It answers `false` only when it is certain: any `\u` escape, an unknown or non-string action,
 * a key that only differs from `action` in case, or a body it cannot read sends the commit to the
 * gate, which is always correct, only slower.
 */
import { isUtf8 } from 'node:buffer'
import { DATA_ACTIONS } from '../iceberg/table-update.js'

/** Table update actions that cannot change a schema, partition spec, sort order or format version. */
export { DATA_ACTIONS }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const MINUS = 0x2d
const ACTION = Buffer.from('action')
const DATA_ACTION_BYTES: readonly Buffer[] = [...DATA_ACTIONS].map(a => Buffer.from(a, 'latin1'))
/** The gate's nesting bound (src/json/parse-commit-body.ts DEFAULT_MAX_DEPTH). */
const MAX_DEPTH = 256

// What a byte means inside a string (RFC 8259 §7): most bytes are plain, bytes from 0x80 up are
// plain too (UTF-8 is checked once for the whole body with `buffer.isUtf8`).
const PLAIN = 0
const END = 1
const ESCAPE = 2
const CONTROL = 3
const IN_STRING = new Uint8Array(256)
IN_STRING.fill(CONTROL, 0, 0x20)
IN_STRING[QUOTE] = END
IN_STRING[BACKSLASH] = ESCAPE
/** Escapes that stand for one fixed character. `\u` is left out on purpose: it could spell any
 * character, an action name's included, so a body holding one is never trusted. */
const SHORT_ESCAPE = new Uint8Array(256)
for (const c of '"\\/bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1

const IN_OBJECT = 1
const IN_ARRAY = 2
/** The open containers of the body being scanned (scans are synchronous: one array serves all). */
const open = new Uint8Array(MAX_DEPTH + 1)

/** Bytes never valid in JSON text: control characters other than whitespace (RFC 8259 §2, §7). */
const FORBIDDEN: readonly number[] = [...Array(0x20).keys()].filter(c => c !== 0x09 && c !== 0x0a && c !== 0x0d)
/** Bytes that may stand between JSON tokens but change how a string ends or reads. */
const NOT_PLAIN: readonly number[] = [BACKSLASH, 0x09, 0x0a, 0x0d]

// Side results of `stringEnd` and `memberValue`, kept in module scope so the scan builds no objects.
let escaped = false
let actionNext = false
/** See `plainBody`; set for the body being scanned. */
let plainText: string | undefined

function isWs (c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

function skipWs (buf: Buffer, i: number): number {
  const n = buf.length
  while (i < n && isWs(buf[i])) i++
  return i
}

function isDigit (c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39
}

/**
 * Index just past the closing quote of the string opening at `start` (a `"`), or -1 when it is
 * unterminated, holds a control character or a `\u` escape, or an invalid escape.
 * `escaped` reports whether any escape was seen.
 */
function stringEnd (buf: Buffer, start: number): number {
  escaped = false
  if (plainText !== undefined) {
    // No backslash and no control byte anywhere (checked once per body): the next quote ends it.
    const end = plainText.indexOf('"', start + 1)
    return end === -1 ? -1 : end + 1
  }
  const n = buf.length
  let i = start + 1
  while (i < n) {
    const kind = IN_STRING[buf[i] as number]
    if (kind === PLAIN) {
      i++
    } else if (kind === END) {
      return i + 1
    } else if (kind === ESCAPE && SHORT_ESCAPE[buf[i + 1] ?? 0] === 1) {
      escaped = true
      i += 2
    } else {
      return -1
    }
  }
  return -1
}

/**
 * The body as a one-byte string when no string in it can hold an escape or a control character,
 * so that strings can be skipped with the native `String.prototype.indexOf`, else undefined.
 * Control bytes other than whitespace are invalid anywhere in JSON: any of them answers `null`
 * (the gate's). Each test is one `memchr`-speed search (~40 ns for 5 KB here), where a byte-by-byte
 * loop in JavaScript costs about 1 ns per byte on the benchmark machine.
 */
function plainBody (buf: Buffer): string | undefined | null {
  for (const c of FORBIDDEN) if (buf.indexOf(c) !== -1) return null
  for (const c of NOT_PLAIN) if (buf.indexOf(c) !== -1) return undefined
  return buf.toString('latin1')
}

function digitsEnd (buf: Buffer, i: number): number {
  while (isDigit(buf[i])) i++
  return i
}

/** Index just past the number starting at `i` (RFC 8259 §6 grammar), or -1. */
function numberEnd (buf: Buffer, i: number): number {
  if (buf[i] === MINUS) i++
  if (buf[i] === 0x30) {
    i++
  } else if (isDigit(buf[i])) {
    i = digitsEnd(buf, i)
  } else {
    return -1
  }
  if (buf[i] === 0x2e) {
    if (!isDigit(buf[++i])) return -1
    i = digitsEnd(buf, i)
  }
  if (buf[i] === 0x65 || buf[i] === 0x45) {
    i++
    if (buf[i] === 0x2b || buf[i] === MINUS) i++
    if (!isDigit(buf[i])) return -1
    i = digitsEnd(buf, i)
  }
  return i
}

/** Index just past `true`, `false` or `null` at `i`, or -1. */
function literalEnd (buf: Buffer, i: number): number {
  const c = buf[i]
  if (c === 0x74) return buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65 ? i + 4 : -1
  if (c === 0x66) return buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65 ? i + 5 : -1
  if (c === 0x6e) return buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c ? i + 4 : -1
  return -1
}

function equalsIgnoreAsciiCase (buf: Buffer, from: number, to: number, word: Buffer): 'exact' | 'case' | 'no' {
  if (to - from !== word.length) return 'no'
  let exact = true
  for (let k = 0; k < word.length; k++) {
    const c = buf[from + k] as number
    const w = word[k] as number
    if (c === w) continue
    if ((c | 0x20) === w && c >= 0x41 && c <= 0x5a) {
      exact = false
      continue
    }
    return 'no'
  }
  return exact ? 'exact' : 'case'
}

/** The bytes `from`..`to` name a data action, ASCII letters compared in lower case. */
function isDataAction (buf: Buffer, from: number, to: number): boolean {
  for (const word of DATA_ACTION_BYTES) if (equalsIgnoreAsciiCase(buf, from, to, word) !== 'no') return true
  return false
}

/**
 * Reads an object member's key and colon from `i` (the key's opening quote, whitespace skipped) and
 * returns where its value starts, or -1 when the body needs the gate. An `action` key sets
 * `actionNext`; a look-alike in another letter case is odd enough to gate.
 */
function memberValue (buf: Buffer, i: number): number {
  if (buf[i] !== QUOTE) return -1
  const end = stringEnd(buf, i)
  if (end === -1) return -1
  // An escaped key cannot spell `action` (the short escapes stand for no letter).
  const match = escaped ? 'no' : equalsIgnoreAsciiCase(buf, i + 1, end - 1, ACTION)
  if (match === 'case') return -1
  actionNext = match === 'exact'
  const colon = skipWs(buf, end)
  if (buf[colon] !== COLON) return -1
  return skipWs(buf, colon + 1)
}

/**
 * True unless `raw` is certainly a commit whose updates are all data/metadata-only actions.
 *
 * One pass over the bytes both follows the strict JSON grammar (RFC 8259: the same text
 * `JSON.parse` accepts) and checks every `action` value, at any depth and however often a key
 * repeats, building no objects and no strings. The body must also be valid UTF-8: a body that is
 * not strict JSON (bad UTF-8, single quotes, unquoted keys, trailing bytes) could be read
 * differently by a lenient upstream parser, so it is never forwarded unjudged.
 * Why not `JSON.parse`: on the benchmark's 5 KB data commit the previous scan plus `JSON.parse`
 * took about 21 µs, most of it building the throw-away tree; this pass takes a few µs
 * (bench/scan-parts.ts). test/unit/json/commit-scan.test.ts checks that it decides exactly as that scan did.
 */
export function needsGate (raw: Buffer): boolean {
  const start = skipWs(raw, 0)
  if (raw[start] !== OPEN_BRACE) return true
  const plain = plainBody(raw)
  if (plain === null) return true
  plainText = plain
  try {
    return scan(raw, start)
  } finally {
    plainText = undefined
  }
}

/** The grammar walk of `needsGate` from the opening brace at `i`. */
function scan (raw: Buffer, i: number): boolean {
  let depth = 0
  actionNext = false
  for (;;) {
    // A value starts at `i` (whitespace skipped).
    const c = raw[i]
    if (actionNext) {
      actionNext = false
      if (c !== QUOTE) return true
      const end = stringEnd(raw, i)
      if (end === -1 || escaped || !isDataAction(raw, i + 1, end - 1)) return true
      i = end
    } else if (c === QUOTE) {
      i = stringEnd(raw, i)
      if (i === -1) return true
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      // Too deep for the gate's reader is the gate's to refuse.
      if (++depth > MAX_DEPTH) return true
      const object = c === OPEN_BRACE
      open[depth] = object ? IN_OBJECT : IN_ARRAY
      i = skipWs(raw, i + 1)
      if (raw[i] === (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
        depth--
        i++
      } else {
        if (object && (i = memberValue(raw, i)) === -1) return true
        continue
      }
    } else {
      i = c === MINUS || isDigit(c) ? numberEnd(raw, i) : literalEnd(raw, i)
      if (i === -1) return true
    }
    // After a value: close containers, or move to the next element or member.
    for (;;) {
      i = skipWs(raw, i)
      if (depth === 0) return i !== raw.length || !isUtf8(raw)
      const d = raw[i]
      if (d === COMMA) {
        i = skipWs(raw, i + 1)
        if (open[depth] === IN_OBJECT && (i = memberValue(raw, i)) === -1) return true
        break
      }
      if (d !== (open[depth] === IN_OBJECT ? CLOSE_BRACE : CLOSE_BRACKET)) return true
      depth--
      i++
    }
  }
}

/** A body in a content coding (gzip…) cannot be scanned: the gate must decide. */
export function hasContentCoding (contentEncoding: string | string[] | undefined): boolean {
  if (contentEncoding === undefined) return false
  const v = Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding
  return v.trim() !== '' && v.trim().toLowerCase() !== 'identity'
}
