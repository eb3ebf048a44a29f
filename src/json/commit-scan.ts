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
import {
  CLOSE_BRACE, CLOSE_BRACKET, COMMA, DEFAULT_MAX_DEPTH, equalsIgnoreAsciiCase, memberKey, memberValue, OPEN_BRACE,
  OPEN_BRACKET, plainText, QUOTE, scalarEnd, skipWs, stringEnd, stringToken
} from './scan.js'

/** Table update actions that cannot change a schema, partition spec, sort order or format version. */
export { DATA_ACTIONS }

const ACTION = Buffer.from('action')
const DATA_ACTION_BYTES: readonly Buffer[] = [...DATA_ACTIONS].map(a => Buffer.from(a, 'latin1'))
/** The gate's nesting bound: deeper is the gate's to refuse. */
const MAX_DEPTH = DEFAULT_MAX_DEPTH

const IN_OBJECT = 1
const IN_ARRAY = 2
/** The open containers of the body being scanned (scans are synchronous: one array serves all). */
const open = new Uint8Array(MAX_DEPTH + 1)

/** Set by `memberStart`: the member just read has the key `action`. */
let actionNext = false
/** See `plainText` (scan.ts); set for the body being scanned. */
let plain: string | undefined

/** The bytes `from`..`to` name a data action, ASCII letters compared in lower case. */
function isDataAction (buf: Buffer, from: number, to: number): boolean {
  for (const word of DATA_ACTION_BYTES) if (equalsIgnoreAsciiCase(buf, from, to, word) !== 'no') return true
  return false
}

/**
 * Reads an object member's key and colon from `i` and returns where its value starts, or -1 when
 * the body needs the gate. An `action` key sets `actionNext`; a look-alike in another letter case
 * is odd enough to gate, and so is a key spelled with a `\u` escape (it could spell `action`).
 */
function memberStart (buf: Buffer, i: number): number {
  const value = memberValue(buf, i, plain)
  if (value === -1 || stringToken.unicode) return -1
  // A key with short escapes only cannot spell `action` (they stand for no letter).
  const match = stringToken.escaped ? 'no' : equalsIgnoreAsciiCase(buf, memberKey.start + 1, memberKey.end - 1, ACTION)
  if (match === 'case') return -1
  actionNext = match === 'exact'
  return value
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
  const text = plainText(raw)
  if (text === null) return true
  plain = text
  try {
    return scan(raw, start)
  } finally {
    plain = undefined
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
      const end = stringEnd(raw, i, plain)
      if (end === -1 || stringToken.escaped || !isDataAction(raw, i + 1, end - 1)) return true
      i = end
    } else if (c === QUOTE) {
      // Any `\u` escape could spell an action name where a key is not expected to: never trusted.
      i = stringEnd(raw, i, plain)
      if (i === -1 || stringToken.unicode) return true
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
        if (object && (i = memberStart(raw, i)) === -1) return true
        continue
      }
    } else {
      i = scalarEnd(raw, i)
      if (i === -1) return true
    }
    // After a value: close containers, or move to the next element or member.
    for (;;) {
      i = skipWs(raw, i)
      if (depth === 0) return i !== raw.length || !isUtf8(raw)
      const d = raw[i]
      if (d === COMMA) {
        i = skipWs(raw, i + 1)
        if (open[depth] === IN_OBJECT && (i = memberStart(raw, i)) === -1) return true
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
