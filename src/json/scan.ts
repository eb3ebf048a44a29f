/**
 * The lexical layer of iceguard's JSON readers (RFC 8259), written once: whitespace, string ends
 * with their escapes, number tokens, literals, the nesting bound and key comparison. Every
 * processor in `src/json/` finds tokens with these functions and keeps only its own structure:
 * the commit triage (`commit-scan.ts`), the lossless readers (`read-json.ts`, `read-base.ts`) and
 * the requirement splicer (`splice-requirements.ts`).
 *
 * The layer comes in two forms, because the processors hold JSON in two forms:
 * - **Bytes** (a Buffer as received), strict: a string with a control byte or a bad escape, a
 *   number off the grammar, a misspelt literal is refused here (-1). The triage decides from the
 *   bytes alone whether a body is strict JSON, and the splicer needs byte offsets.
 * - **Text** (a decoded string), lenient: the readers hand the grammar to the native `JSON.parse`
 *   and only need where tokens end, found with the native `indexOf` (strings are most of a
 *   document's characters); positions must be string indices, which differ from byte offsets as
 *   soon as the text holds a non-ASCII character. The one grammar check the text form makes, on
 *   the few numbers kept as text, is `NUMBER`, the same grammar as `numberEnd` (a property test,
 *   test/unit/json/scan.test.ts, holds the two to each other and both to `JSON.parse`).
 *
 * Side results (whether a string had escapes, what a number token looked like) are left in module
 * objects reused for every token, so that scanning allocates nothing per token: the triage and the
 * readers are on every commit's path (docs/performance.md).
 */

/** Deepest nesting of objects and arrays a commit body may have. A real schema needs far fewer. */
export const DEFAULT_MAX_DEPTH = 256

/** The refusal for a document nested deeper than `maxDepth`. */
export function depthProblem (maxDepth: number): string {
  return `nesting deeper than ${maxDepth} levels`
}

export const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
export const COMMA = 0x2c
export const OPEN_BRACE = 0x7b
export const CLOSE_BRACE = 0x7d
export const OPEN_BRACKET = 0x5b
export const CLOSE_BRACKET = 0x5d
const MINUS = 0x2d

// ---------------------------------------------------------------------------------------------
// Bytes

/** JSON's four whitespace bytes (RFC 8259 §2); anything else between tokens is an error. */
export function isWs (c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/** Index of the first byte from `i` that is not whitespace (the length at the end). */
export function skipWs (buf: Buffer, i: number): number {
  const n = buf.length
  while (i < n && isWs(buf[i])) i++
  return i
}

function isDigit (c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39
}

// What a byte means inside a string (RFC 8259 §7): most bytes are plain, bytes from 0x80 up are
// plain too (UTF-8 is the caller's to check, once for the whole body with `buffer.isUtf8`).
const PLAIN = 0
const END = 1
const ESCAPE = 2
const IN_STRING = new Uint8Array(256)
IN_STRING.fill(3, 0, 0x20)
IN_STRING[QUOTE] = END
IN_STRING[BACKSLASH] = ESCAPE
/** Escapes that stand for one fixed character. */
const SHORT_ESCAPE = new Uint8Array(256)
for (const c of '"\\/bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1
const HEX = new Uint8Array(256)
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1

/** What `stringEnd` found in the string it read last: one object reused for every string. */
export const stringToken = {
  /** Any escape. */
  escaped: false,
  /** A `\u` escape, which can spell any character (a lone surrogate included). */
  unicode: false
}

/**
 * Index just past the closing quote of the string opening at `start` (a `"`), or -1 when it is
 * unterminated, holds a control byte, or an escape the grammar does not have. Sets `stringToken`.
 *
 * `plain`, when given, is the same bytes as a one-byte string, known to hold no backslash and no
 * control byte (see `plainText`): the next quote ends the string, found natively.
 */
export function stringEnd (buf: Buffer, start: number, plain?: string): number {
  stringToken.escaped = false
  stringToken.unicode = false
  if (plain !== undefined) {
    // No backslash anywhere: the next quote ends the string (`quoteEnd` without its escape test,
    // which cost a sixth of the triage on the benchmark's data commit).
    const end = plain.indexOf('"', start + 1)
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
    } else if (kind === ESCAPE) {
      const e = buf[i + 1] ?? 0
      stringToken.escaped = true
      if (SHORT_ESCAPE[e] === 1) {
        i += 2
      } else if (e === 0x75 && HEX[buf[i + 2] ?? 0] === 1 && HEX[buf[i + 3] ?? 0] === 1 && HEX[buf[i + 4] ?? 0] === 1 && HEX[buf[i + 5] ?? 0] === 1) {
        stringToken.unicode = true
        i += 6
      } else {
        return -1
      }
    } else {
      return -1
    }
  }
  return -1
}

/** Bytes never valid in JSON text: control characters other than whitespace (RFC 8259 §2, §7). */
const FORBIDDEN: readonly number[] = [...Array(0x20).keys()].filter(c => !isWs(c))
/** Bytes that may stand between JSON tokens but change how a string ends or reads. */
const NOT_PLAIN: readonly number[] = [BACKSLASH, 0x09, 0x0a, 0x0d]

/**
 * The body as a one-byte string when no string in it can hold an escape or a control byte, so
 * that `stringEnd` can find closing quotes with the native `String.prototype.indexOf`; undefined
 * when it may hold some; null when it holds a byte that is invalid anywhere in JSON. Each test is
 * one `memchr`-speed search (~40 ns for 5 KB on the benchmark machine), where a byte-by-byte loop
 * in JavaScript costs about 1 ns per byte.
 */
export function plainText (buf: Buffer): string | undefined | null {
  for (const c of FORBIDDEN) if (buf.indexOf(c) !== -1) return null
  for (const c of NOT_PLAIN) if (buf.indexOf(c) !== -1) return undefined
  return buf.toString('latin1')
}

function digitsEnd (buf: Buffer, i: number): number {
  while (isDigit(buf[i])) i++
  return i
}

/** Index just past the number starting at `i` (RFC 8259 §6 grammar, the longest match), or -1. */
export function numberEnd (buf: Buffer, i: number): number {
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
export function literalEnd (buf: Buffer, i: number): number {
  const c = buf[i]
  if (c === 0x74) return buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65 ? i + 4 : -1
  if (c === 0x66) return buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65 ? i + 5 : -1
  if (c === 0x6e) return buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c ? i + 4 : -1
  return -1
}

/** Index just past the number or literal at `i`, or -1. */
export function scalarEnd (buf: Buffer, i: number): number {
  const c = buf[i]
  return c === MINUS || isDigit(c) ? numberEnd(buf, i) : literalEnd(buf, i)
}

const IN_OBJECT = 1
const IN_ARRAY = 2
/** The open containers of `valueEnd`'s walk (synchronous: one array serves every walk), grown on demand. */
let open = new Uint8Array(DEFAULT_MAX_DEPTH + 1)

function grow (): void {
  const wider = new Uint8Array(open.length * 2)
  wider.set(open)
  open = wider
}

/**
 * Index just past the JSON value at `i` (whitespace before it skipped), or -1 when the bytes from
 * there are not one strict value (RFC 8259 grammar) or nest deeper than `maxDepth`. UTF-8 is not
 * checked (see `stringEnd`).
 */
export function valueEnd (buf: Buffer, i: number, maxDepth = DEFAULT_MAX_DEPTH, plain?: string): number {
  let depth = 0
  i = skipWs(buf, i)
  for (;;) {
    // A value starts at `i` (whitespace skipped).
    const c = buf[i]
    if (c === QUOTE) {
      i = stringEnd(buf, i, plain)
      if (i === -1) return -1
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return -1
      if (depth === open.length) grow()
      const object = c === OPEN_BRACE
      open[depth] = object ? IN_OBJECT : IN_ARRAY
      i = skipWs(buf, i + 1)
      if (buf[i] === (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
        depth--
        i++
      } else {
        if (object && (i = memberValue(buf, i, plain)) === -1) return -1
        continue
      }
    } else {
      i = scalarEnd(buf, i)
      if (i === -1) return -1
    }
    // After a value: close containers, or move to the next element or member.
    for (;;) {
      if (depth === 0) return i
      i = skipWs(buf, i)
      const d = buf[i]
      if (d === COMMA) {
        i = skipWs(buf, i + 1)
        if (open[depth] === IN_OBJECT && (i = memberValue(buf, i, plain)) === -1) return -1
        break
      }
      if (d !== (open[depth] === IN_OBJECT ? CLOSE_BRACE : CLOSE_BRACKET)) return -1
      depth--
      i++
    }
  }
}

const UNICODE_ESCAPE = Buffer.from('\\u')

/** Whether a `\u` escape stands anywhere in `buf` (a backslash not itself escaped, then `u`). */
export function hasUnicodeEscape (buf: Buffer): boolean {
  for (let at = buf.indexOf(UNICODE_ESCAPE); at !== -1; at = buf.indexOf(UNICODE_ESCAPE, at + 1)) {
    // Backslashes pair off from the left: the last of an odd run escapes the `u`.
    let b = at - 1
    while (buf[b] === BACKSLASH) b--
    if ((at - b) % 2 === 1) return true
  }
  return false
}

/**
 * Reads the colon after an object member's key, the key's closing quote just before `i`: the
 * start of the member's value (whitespace skipped), or -1 when no colon follows.
 */
export function colonValue (buf: Buffer, i: number): number {
  const colon = skipWs(buf, i)
  if (buf[colon] !== COLON) return -1
  return skipWs(buf, colon + 1)
}

/**
 * Reads an object member's key and colon from `i` (the key's opening quote, whitespace skipped):
 * the start of its value (whitespace skipped), or -1. The key ends at `stringEnd`'s answer, and
 * `stringToken` says how it is spelled.
 */
export function memberValue (buf: Buffer, i: number, plain?: string): number {
  if (buf[i] !== QUOTE) return -1
  const end = stringEnd(buf, i, plain)
  return end === -1 ? -1 : colonValue(buf, end)
}

/**
 * Compares the bytes `from`..`to` (a key's or value's characters, quotes excluded) with `word`,
 * ASCII letters in any case: 'exact', 'case' (equal only ignoring the case of ASCII letters) or 'no'.
 */
export function equalsIgnoreAsciiCase (buf: Buffer, from: number, to: number, word: Buffer): 'exact' | 'case' | 'no' {
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

/**
 * Whether the string token `start`..`end` (quotes included) of valid JSON spells `key`; an escaped
 * token (`escaped`: `stringToken.escaped` after `stringEnd` read it) is decoded first:
 * `"requir\u0065ments"` is `requirements`.
 */
export function keyIs (buf: Buffer, start: number, end: number, escaped: boolean, key: string, keyBytes: Buffer): boolean {
  if (!escaped) return equalsIgnoreAsciiCase(buf, start + 1, end - 1, keyBytes) === 'exact'
  return decodeString(buf.toString('utf8', start, end)) === key
}

// ---------------------------------------------------------------------------------------------
// Text

/**
 * Index of the quote closing the string that opens at `start` in `text` (the text's length when
 * unterminated): the next quote not escaped, i.e. not preceded by an odd run of backslashes.
 * Escapes and characters are `JSON.parse`'s to check.
 */
export function quoteEnd (text: string, start: number): number {
  let q = start
  for (;;) {
    q = text.indexOf('"', q + 1)
    if (q === -1) return text.length
    let b = q - 1
    while (text.charCodeAt(b) === 0x5c) b--
    if ((q - b) % 2 === 1) return q
  }
}

/** Whether `text` holds a backslash between `start` and `end` (a string token spelled with an escape). */
export function hasEscape (text: string, start: number, end: number): boolean {
  for (let j = start + 1; j < end; j++) if (text.charCodeAt(j) === 0x5c) return true
  return false
}

/** The value of a JSON string token (quotes included), or undefined when it is not one. */
export function decodeString (token: string): string | undefined {
  try {
    const value: unknown = JSON.parse(token)
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}

/** RFC 8259 §6 number grammar, as `numberEnd` follows it, for a token cut out of text. */
export const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/** An integer of 16 or more digits may exceed 2^53 (9007199254740992); shorter ones are exact. */
const SAFE_DIGITS = 15

/** What `numberTokenEnd` found: one object reused for every token, so a scan allocates nothing per number. */
const numberToken = { integer: true, digits: 0 }

/**
 * End of the number token starting at `start` (a `-` or a digit): the first character that is not
 * a digit, `.`, `e`, `E`, `+` or a `-` after the first. Grammar is `NUMBER`'s to check, on the few
 * tokens kept (`keepsExact`). Sets `numberToken`: whether it has no fraction or exponent, and how
 * many digits.
 */
export function numberTokenEnd (text: string, start: number): number {
  const n = text.length
  let digits = 0
  let integer = true
  let i = start
  for (; i < n; i++) {
    const d = text.charCodeAt(i)
    if (d >= 0x30 && d <= 0x39) digits++
    else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || (d === 0x2d && i > start)) integer = false
    else if (!(d === 0x2d && i === start)) break
  }
  numberToken.integer = integer
  numberToken.digits = digits
  return i
}

/**
 * Whether the number token `start`..`end` just read by `numberTokenEnd` must keep its text: an
 * integer past 2^53 or, with `fractions`, any number with a fraction or exponent. A token off the
 * grammar is never kept (`JSON.parse` refuses it where it stands).
 */
export function keepsExact (text: string, start: number, end: number, fractions: boolean): boolean {
  return (numberToken.integer ? numberToken.digits > SAFE_DIGITS : fractions) && NUMBER.test(text.slice(start, end))
}
