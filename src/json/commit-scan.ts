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
  CLOSE_BRACE, CLOSE_BRACKET, colonValue, COMMA, DEFAULT_MAX_DEPTH, equalsIgnoreAsciiCase, hasUnicodeEscape, OPEN_BRACE,
  OPEN_BRACKET, plainText, QUOTE, scalarEnd, skipWs, stringEnd, stringToken
} from './scan.js'

/** Table update actions that cannot change a schema, partition spec, sort order or format version. */
export { DATA_ACTIONS }

const ACTION = Buffer.from('action')
/** The gate's nesting bound: deeper is the gate's to refuse. */
const MAX_DEPTH = DEFAULT_MAX_DEPTH
const DATA_ACTION_BYTES: readonly Buffer[] = [...DATA_ACTIONS].map(a => Buffer.from(a, 'latin1'))

/** The bytes `from`..`to` name a data action, ASCII letters compared in lower case. */
function isDataAction (buf: Buffer, from: number, to: number): boolean {
  for (const word of DATA_ACTION_BYTES) if (equalsIgnoreAsciiCase(buf, from, to, word) !== 'no') return true
  return false
}

/**
 * Reads an object member's key and colon from `i` and returns where its value starts, or -1 when
 * the body needs the gate: a key that only differs from `action` in letter case is odd enough to
 * gate, and the value of an `action` key must be a data action, spelled without escapes. (A key
 * with short escapes only cannot spell `action`: they stand for no letter; `\u` was refused
 * before the walk.)
 */
function memberStart (buf: Buffer, i: number, plain: string | undefined): number {
  if (buf[i] !== QUOTE) return -1
  const keyEnd = stringEnd(buf, i, plain)
  if (keyEnd === -1) return -1
  const match = stringToken.escaped ? 'no' : equalsIgnoreAsciiCase(buf, i + 1, keyEnd - 1, ACTION)
  if (match === 'case') return -1
  const value = colonValue(buf, keyEnd)
  if (value === -1) return -1
  if (match === 'exact') {
    if (buf[value] !== QUOTE) return -1
    const end = stringEnd(buf, value, plain)
    if (end === -1 || stringToken.escaped || !isDataAction(buf, value + 1, end - 1)) return -1
  }
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
  const plain = plainText(raw)
  if (plain === null) return true
  // A `\u` escape could spell any character, an action name's included: never trusted. (A plain
  // body holds no backslash.)
  if (plain === undefined && hasUnicodeEscape(raw)) return true
  const end = walk(raw, start, plain)
  return end === -1 || skipWs(raw, end) !== raw.length || !isUtf8(raw)
}

const IN_OBJECT = 1
const IN_ARRAY = 2
/** The open containers of the body being walked (walks are synchronous: one array serves all). */
const open = new Uint8Array(MAX_DEPTH + 1)

/**
 * `valueEnd` (scan.ts) from the object at `i`, with every member read by `memberStart`. The walk is
 * written here again around the shared token functions because reading members through a function
 * handed to `valueEnd` cost the triage 10–15% on the benchmark's 5 KB data commit
 * (bench/scan-parts.ts); the property tests hold both walks to `JSON.parse`
 * (test/unit/json/scan.test.ts, commit-scan.test.ts).
 */
function walk (raw: Buffer, i: number, plain: string | undefined): number {
  let depth = 0
  for (;;) {
    // A value starts at `i` (whitespace skipped).
    const c = raw[i]
    if (c === QUOTE) {
      i = stringEnd(raw, i, plain)
      if (i === -1) return -1
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      // Too deep for the gate's reader is the gate's to refuse.
      if (++depth > MAX_DEPTH) return -1
      const object = c === OPEN_BRACE
      open[depth] = object ? IN_OBJECT : IN_ARRAY
      i = skipWs(raw, i + 1)
      if (raw[i] === (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
        depth--
        i++
      } else {
        if (object && (i = memberStart(raw, i, plain)) === -1) return -1
        continue
      }
    } else {
      i = scalarEnd(raw, i)
      if (i === -1) return -1
    }
    // After a value: close containers, or move to the next element or member.
    for (;;) {
      if (depth === 0) return i
      i = skipWs(raw, i)
      const d = raw[i]
      if (d === COMMA) {
        i = skipWs(raw, i + 1)
        if (open[depth] === IN_OBJECT && (i = memberStart(raw, i, plain)) === -1) return -1
        break
      }
      if (d !== (open[depth] === IN_OBJECT ? CLOSE_BRACE : CLOSE_BRACKET)) return -1
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
