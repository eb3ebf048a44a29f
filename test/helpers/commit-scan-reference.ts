/**
 * The commit scanner as it was before the one-pass validator (src/json/commit-scan.ts): find every
 * `action` key with a forgiving scan, then prove the body strict JSON with `buffer.isUtf8` and
 * `JSON.parse`. Kept as the oracle the new scanner must agree with on every body
 * (test/unit/json/commit-scan.test.ts) and as the "before" row of bench/scan-parts.ts.
 */
import { isUtf8 } from 'node:buffer'
import { DATA_ACTIONS } from '../../src/json/commit-scan.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const ACTION = Buffer.from('action')
/** The gate's nesting bound (src/json/scan.ts DEFAULT_MAX_DEPTH). */
const MAX_DEPTH = 256

function isWs (c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

function skipWs (buf: Buffer, i: number): number {
  while (i < buf.length && isWs(buf[i])) i++
  return i
}

/**
 * Index just past the closing quote of the string opening at `start` (a `"`), or -1 when it is
 * unterminated, holds a control character or a `\u` escape, or an invalid escape.
 * `escaped` reports whether any escape was seen.
 */
function stringEnd (buf: Buffer, start: number, state: { escaped: boolean }): number {
  state.escaped = false
  let i = start + 1
  while (i < buf.length) {
    const c = buf[i] as number
    if (c === QUOTE) return i + 1
    if (c < 0x20) return -1
    if (c === BACKSLASH) {
      const e = buf[i + 1]
      // \u could spell any character, including an action name: never trust it.
      if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1
      state.escaped = true
      i += 2
      continue
    }
    i++
  }
  return -1
}

/**
 * The same three answers as the scanner's byte loop, reached another way (text, not bytes), so the
 * reference does not share the scanner's code: only ASCII A–Z fold, as the REST fixture compares.
 */
function equalsIgnoreAsciiCase (buf: Buffer, from: number, to: number, word: Buffer): 'exact' | 'case' | 'no' {
  const text = buf.toString('latin1', from, to)
  const target = word.toString('latin1')
  if (text === target) return 'exact'
  return text.replace(/[A-Z]/g, c => c.toLowerCase()) === target ? 'case' : 'no'
}

function lowerAscii (buf: Buffer, from: number, to: number): string | undefined {
  let s = ''
  for (let k = from; k < to; k++) {
    const c = buf[k] as number
    if (c >= 0x80) return undefined
    s += String.fromCharCode(c >= 0x41 && c <= 0x5a ? c | 0x20 : c)
  }
  return s
}

/** True unless `raw` is certainly a commit whose updates are all data/metadata-only actions. */
export function needsGateByParse (raw: Buffer): boolean {
  let i = skipWs(raw, 0)
  if (raw[i] !== OPEN_BRACE) return true
  const state = { escaped: false }
  let depth = 0
  while (i < raw.length) {
    const c = raw[i]
    if (c !== QUOTE) {
      // Outside strings every bracket is structure: too deep for the gate's reader is the gate's to refuse.
      if (c === OPEN_BRACE || c === 0x5b) {
        if (++depth > MAX_DEPTH) return true
      } else if (c === 0x7d || c === 0x5d) {
        depth--
      }
      i++
      continue
    }
    const end = stringEnd(raw, i, state)
    if (end === -1) return true
    const after = skipWs(raw, end)
    if (raw[after] !== COLON) {
      i = end
      continue
    }
    // A key. Only `action` matters; a look-alike in another case is odd enough to gate.
    const match = state.escaped ? 'no' : equalsIgnoreAsciiCase(raw, i + 1, end - 1, ACTION)
    if (match === 'case') return true
    if (match === 'no') {
      i = after + 1
      continue
    }
    const v = skipWs(raw, after + 1)
    if (raw[v] !== QUOTE) return true
    const vEnd = stringEnd(raw, v, state)
    if (vEnd === -1 || state.escaped) return true
    const action = lowerAscii(raw, v + 1, vEnd - 1)
    if (action === undefined || !DATA_ACTIONS.has(action)) return true
    i = vEnd
  }
  // The scan reads only what it needs; a body that is not strict JSON (bad UTF-8, single quotes,
  // unquoted keys, trailing bytes) could be read differently by a lenient upstream parser, so it
  // is never forwarded unjudged. JSON.parse here only validates: its numbers are thrown away.
  return !isStrictJson(raw)
}

function isStrictJson (raw: Buffer): boolean {
  // Strict UTF-8 first (invalid sequences and encoded surrogates fail, as with a fatal
  // TextDecoder; a BOM never gets here, the scan wants `{` first). Buffer decoding gives a one-byte
  // string for an ASCII body, which V8 parses about a third faster than TextDecoder's two-byte one.
  if (!isUtf8(raw)) return false
  try {
    JSON.parse(raw.toString('utf8'))
    return true
  } catch {
    return false
  }
}

/**
 * What a body that skips the gate must be: strict JSON, an object, and every value of a key that
 * reads `action` in any letter case, at any depth, a data action.
 */
export function onlyDataActions (raw: Buffer): boolean {
  const parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw)) as unknown
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return false
  return actionValues(parsed).every(a => typeof a === 'string' && DATA_ACTIONS.has(a.toLowerCase()))
}

function actionValues (v: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(v)) for (const x of v) actionValues(x, out)
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k.toLowerCase() === 'action') out.push(x)
      actionValues(x, out)
    }
  }
  return out
}
