/**
 * A fast JSON reader: V8's native `JSON.parse`, with the numbers it would change kept exact.
 *
 * `lossless-json` is a JavaScript parser several times slower than `JSON.parse`; on a typical base
 * (50 columns, 20 schemas of history, ~80 KB) it was most of a schema commit's CPU, and on the
 * commit body itself most of what was left. The gate needs exact text for few values: integers
 * past 2^53 (snapshot ids, long defaults) and, on a commit body, every number with a fraction or
 * exponent (`1.0` is not an integer default, `1e400` is not Infinity). One flat pass over the text
 * bounds the nesting depth, finds those number tokens and, in strict mode, refuses duplicate keys
 * (the upstream's parser may keep the other copy than the one validated) and `__proto__` /
 * `constructor.prototype` keys. Each kept number is handed to `JSON.parse` as a marked string and
 * turned into a `LosslessNumber` afterwards. Every other number is a plain number, exact by
 * construction, which every reader of the tree accepts (`json-values.ts`).
 *
 * Without strict mode keys are the sender's business: a repeated key keeps its last value, as
 * `JSON.parse` and Jackson do, and `__proto__` is an own property like any other (never a
 * prototype).
 */
import { LosslessNumber } from 'lossless-json'

/** Marks a kept number inside a string; a JSON text could only produce it through a `\u0001` escape, which sends the text to the slow path. */
const MARK = '\u0001'
export const MARK_ESCAPE = '\\u0001'

// An integer of 16 or more digits may exceed 2^53 (9007199254740992); shorter ones are exact.
export const SAFE_DIGITS = 15

/** RFC 8259 §6 number grammar: a token that does not match is left for `JSON.parse` to refuse. */
export const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

export type JsonRead =
  | { readonly ok: true, readonly value: unknown }
  | { readonly ok: false, readonly problem: string }

export interface ReadOptions {
  /** Deepest nesting of objects and arrays accepted. */
  readonly maxDepth: number
  /** Refuse duplicate keys and prototype keys (request bodies). */
  readonly strict?: boolean
  /** Keep numbers with a fraction or exponent as their text too, not only long integers. */
  readonly keepFractions?: boolean
  /**
   * Called instead of the native path when the text contains the marker's escape (a body nobody
   * sends; the result is the same, only slower). Checks of the scan have passed by then.
   */
  readonly slow: (text: string) => unknown
}

/** Parses `text`; the problem, when there is one, is a fragment to put after "Cannot read …: ". */
export function readJson (text: string, opts: ReadOptions): JsonRead {
  const scanned = scan(text, opts)
  if (typeof scanned === 'string') return { ok: false, problem: scanned }
  try {
    if (scanned.length === 0) return { ok: true, value: JSON.parse(text) }
    if (text.includes(MARK_ESCAPE)) return { ok: true, value: opts.slow(text) }
    let marked = ''
    let from = 0
    for (let k = 0; k < scanned.length; k += 2) {
      const start = scanned[k] as number
      const end = scanned[k + 1] as number
      marked += `${text.slice(from, start)}"${MARK_ESCAPE}${text.slice(start, end)}"`
      from = end
    }
    marked += text.slice(from)
    return { ok: true, value: reviveMarks(JSON.parse(marked), scanned.length / 2) }
  } catch (err) {
    return { ok: false, problem: `invalid JSON: ${nativeMessage(text, err)}` }
  }
}

/** What `numberTokenEnd` found: one object reused for every token, so a scan allocates nothing per number. */
export const numberToken = { integer: true, digits: 0 }

/**
 * End of the number token starting at `start` (a `-` or a digit): the first character that is not
 * a digit, `.`, `e`, `E`, `+` or a `-` after the first. Grammar is `NUMBER`'s to check, on the few
 * tokens kept. Sets `numberToken`: whether it has no fraction or exponent, and how many digits.
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
 * One pass over the text: depth, kept number tokens (as start, end pairs) and, when strict, keys.
 * Grammar is left to `JSON.parse`; a problem found here is returned as a message.
 */
function scan (text: string, opts: ReadOptions): number[] | string {
  const { maxDepth } = opts
  const strict = opts.strict === true
  const fractions = opts.keepFractions === true
  const kept: number[] = []
  // Per open container (strict mode only): whether it is an object, the keys seen so far and the
  // key it was opened under. Key lists are reused level by level: most objects have a few keys, for
  // which a linear search beats allocating a Set; a list that grows long gets a Set beside it.
  const isObject: boolean[] = []
  const keyLists: string[][] = []
  const keySets: Array<Set<string> | undefined> = []
  const openedUnder: Array<string | undefined> = []
  let depth = 0
  let expectKey = false
  let lastKey: string | undefined
  let checkKeys = strict
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string: strings are most of the bytes, so the closing quote is found natively
      const start = i
      i = stringEnd(text, i)
      if (checkKeys && expectKey) {
        if (isObject[depth - 1] === true) {
          const key = hasEscape(text, start, i) ? decodeKey(text.slice(start, i + 1)) : text.slice(start + 1, i)
          if (key === undefined) {
            // A bad escape: JSON.parse refuses the text with a better message than ours.
            checkKeys = false
          } else {
            if (key === '__proto__') return 'the key "__proto__" is not allowed'
            if (key === 'prototype' && openedUnder[depth - 1] === 'constructor') return 'the key "constructor.prototype" is not allowed'
            if (seenKey(keyLists[depth - 1] as string[], keySets, depth - 1, key)) return `duplicate key "${printable(key)}" in one object`
            lastKey = key
          }
        }
        expectKey = false
      }
    } else if (c === 0x7b || c === 0x5b) { // { [
      if (depth >= maxDepth) return `nesting deeper than ${maxDepth} levels`
      const object = c === 0x7b
      if (checkKeys) {
        isObject[depth] = object
        if (object) {
          const list = keyLists[depth]
          if (list === undefined) keyLists[depth] = []
          else list.length = 0
          keySets[depth] = undefined
        }
        openedUnder[depth] = lastKey
      }
      depth++
      expectKey = object
      lastKey = undefined
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) depth--
      expectKey = false
      lastKey = undefined
    } else if (c === 0x2c) { // ,
      expectKey = checkKeys && isObject[depth - 1] === true
      lastKey = undefined
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // a number token
      const start = i
      i = numberTokenEnd(text, i)
      if ((numberToken.integer ? numberToken.digits > SAFE_DIGITS : fractions) && NUMBER.test(text.slice(start, i))) kept.push(start, i)
      i--
    }
  }
  return kept
}

/** Index of the quote closing the string that opens at `start` (the text's length when unterminated). */
export function stringEnd (text: string, start: number): number {
  let q = start
  for (;;) {
    q = text.indexOf('"', q + 1)
    if (q === -1) return text.length
    // Escaped when preceded by an odd number of backslashes.
    let b = q - 1
    while (text.charCodeAt(b) === 0x5c) b--
    if ((q - b) % 2 === 1) return q
  }
}

/**
 * Turns the `count` marked strings back into numbers. Members are visited last first and the walk
 * stops at the last mark: long ids live in the snapshot part of table metadata, which every writer
 * puts after the schemas, so a base's schema history is usually never walked.
 */
export function reviveMarks (root: unknown, count: number): unknown {
  let left = count
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') {
      if (value.charCodeAt(0) !== 1 || !value.startsWith(MARK)) return value
      left--
      return new LosslessNumber(value.slice(1))
    }
    if (value === null || typeof value !== 'object') return value
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0 && left > 0; i--) {
        const v: unknown = value[i]
        if (typeof v === 'object' || typeof v === 'string') value[i] = walk(v)
      }
      return value
    }
    const o = value as Record<string, unknown>
    const keys = Object.keys(o)
    for (let k = keys.length - 1; k >= 0 && left > 0; k--) {
      const key = keys[k] as string
      const v = o[key]
      if (typeof v !== 'object' && typeof v !== 'string') continue
      const r = walk(v)
      if (r === v) continue
      // Defined, not assigned: an own `__proto__` key must stay data.
      Object.defineProperty(o, key, { value: r, writable: true, enumerable: true, configurable: true })
    }
    return o
  }
  return walk(root)
}

/** The message `JSON.parse` gives for the text as received (positions in the marked copy would be off). */
export function nativeMessage (text: string, err: unknown): string {
  try {
    JSON.parse(text)
  } catch (original) {
    return (original as Error).message
  }
  return (err as Error).message
}

const LINEAR_KEYS = 16

/** Records `key` for the object at `level`; true when it was there already. */
function seenKey (list: string[], sets: Array<Set<string> | undefined>, level: number, key: string): boolean {
  const set = sets[level]
  if (set !== undefined) {
    if (set.has(key)) return true
    set.add(key)
    return false
  }
  for (let k = 0; k < list.length; k++) if (list[k] === key) return true
  list.push(key)
  if (list.length > LINEAR_KEYS) sets[level] = new Set(list)
  return false
}

function hasEscape (text: string, start: number, end: number): boolean {
  for (let j = start + 1; j < end; j++) if (text.charCodeAt(j) === 0x5c) return true
  return false
}

function decodeKey (token: string): string | undefined {
  try {
    return JSON.parse(token) as string
  } catch {
    return undefined
  }
}

function printable (key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key
}
