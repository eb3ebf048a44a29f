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
import { decodeString, depthProblem, keepsExact, numberTokenEnd, quoteEnd } from './scan.js'

/** Marks a kept number inside a string; a JSON text could only produce it through a `\u0001` escape, which sends the text to the slow path. */
const MARK = '\u0001'
export const MARK_ESCAPE = '\\u0001'

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
    return { ok: true, value: reviveMarks(JSON.parse(marked), scanned.length / 2, text) }
  } catch (err) {
    return { ok: false, problem: `invalid JSON: ${nativeMessage(text, err)}` }
  }
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
  // Strict mode keeps the keys of every open object on one stack (a child's keys above its
  // parent's, dropped when it closes), as a hash and the position of the key's text, so reading
  // a key allocates nothing: a commit body has hundreds of keys, and a slice per key cost more
  // than the rest of the scan. Texts are compared only when two hashes match. Most objects have a
  // few keys, for which a linear search of the hashes beats a Set; an object whose keys grow
  // many gets a Set of its key texts instead.
  const keys = strict ? newKeyStack() : undefined
  // Per open container (strict mode only): whether it is an object, where its keys start on the
  // stack, its Set of keys if it got one, and whether it was opened under the key "constructor".
  const isObject: boolean[] = []
  const keysFrom: number[] = []
  const keySets: Array<Set<string> | undefined> = []
  const underConstructor: boolean[] = []
  let depth = 0
  let expectKey = false
  let lastKeyConstructor = false
  let checkKeys = strict
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string
      const start = i
      if (!(checkKeys && expectKey)) {
        // Strings are most of the bytes, so the closing quote is found natively.
        i = quoteEnd(text, i)
        continue
      }
      expectKey = false
      if (isObject[depth - 1] !== true || keys === undefined) {
        i = quoteEnd(text, i)
        continue
      }
      // A key: short, so read here, hashing as it goes; one with an escape is decoded instead.
      let hash = 0
      let escaped = false
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x22) break
        if (d === 0x5c) { escaped = true; break }
        hash = (Math.imul(hash, 31) + d) | 0
      }
      let decoded: string | undefined
      if (escaped) {
        i = quoteEnd(text, start)
        decoded = decodeString(text.slice(start, i + 1))
        if (decoded === undefined) {
          // A bad escape: JSON.parse refuses the text with a better message than ours.
          checkKeys = false
          continue
        }
        hash = hashOf(decoded)
      }
      const problem = decoded === undefined
        ? plainKeyProblem(text, start, i, underConstructor[depth - 1] === true)
        : keyProblem(decoded, underConstructor[depth - 1] === true)
      if (problem !== undefined) return problem
      const level = depth - 1
      let set = keySets[level]
      if (set === undefined && keys.top - (keysFrom[level] as number) >= LINEAR_KEYS) {
        set = new Set()
        for (let k = keysFrom[level] as number; k < keys.top; k++) set.add(keyText(text, keys, k))
        keys.top = keysFrom[level] as number
        keySets[level] = set
      }
      if (set !== undefined) {
        const key = decoded ?? text.slice(start + 1, i)
        if (set.has(key)) return duplicateKey(key)
        set.add(key)
      } else {
        for (let k = keysFrom[level] as number; k < keys.top; k++) {
          if (keys.hashes[k] === hash && sameKey(text, keys, k, start, i, decoded)) return duplicateKey(decoded ?? text.slice(start + 1, i))
        }
        pushKey(keys, hash, start, i, decoded)
      }
      lastKeyConstructor = decoded === undefined ? i - start === 12 && text.startsWith('constructor', start + 1) : decoded === 'constructor'
    } else if (c === 0x7b || c === 0x5b) { // { [
      if (depth >= maxDepth) return depthProblem(maxDepth)
      const object = c === 0x7b
      if (checkKeys && keys !== undefined) {
        isObject[depth] = object
        keysFrom[depth] = keys.top
        keySets[depth] = undefined
        underConstructor[depth] = lastKeyConstructor
      }
      depth++
      expectKey = object
      lastKeyConstructor = false
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) {
        depth--
        // The closed container's keys (and any left by a child) leave the stack.
        if (keys !== undefined && checkKeys) keys.top = keysFrom[depth] as number
      }
      expectKey = false
      lastKeyConstructor = false
    } else if (c === 0x2c) { // ,
      expectKey = checkKeys && isObject[depth - 1] === true
      lastKeyConstructor = false
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // a number token
      const start = i
      i = numberTokenEnd(text, i)
      if (keepsExact(text, start, i, fractions)) kept.push(start, i)
      i--
    }
  }
  return kept
}

/**
 * Turns the `count` marked strings back into numbers. Members are visited last first and the walk
 * stops at the last mark: long ids live in the snapshot part of table metadata, which every writer
 * puts after the schemas, so a base's schema history is usually never walked.
 *
 * A mark the walk does not find was not a value: either a repeated key dropped it (valid JSON, the
 * last value wins) or the number stood where a key must, which `text` as received is not allowed
 * to get away with (marked, `{1e5:1}` would parse). The rare case checks `text` with `JSON.parse`,
 * which throws the parser's own error for the second.
 */
export function reviveMarks (root: unknown, count: number, text: string): unknown {
  let left = count
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') {
      if (value.charCodeAt(0) !== 1 || !value.startsWith(MARK)) return value
      left--
      return new LosslessNumber(value.slice(1))
    }
    if (value === null || typeof value !== 'object') return value
    if (Array.isArray(value)) {
      // eslint-disable-next-line no-unmodified-loop-condition -- walk() counts it down
      for (let i = value.length - 1; i >= 0 && left > 0; i--) {
        const v: unknown = value[i]
        if (typeof v === 'object' || typeof v === 'string') value[i] = walk(v)
      }
      return value
    }
    const o = value as Record<string, unknown>
    const keys = Object.keys(o)
    // eslint-disable-next-line no-unmodified-loop-condition -- walk() counts it down
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
  const value = walk(root)
  if (left > 0) JSON.parse(text)
  return value
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

/** Keys one object may have before they are kept in a Set rather than searched in a list. */
const LINEAR_KEYS = 16

/** Keys of the open objects: hash, and where the text is (quote to quote) or, if escaped, its decoded text. */
interface KeyStack {
  top: number
  readonly hashes: number[]
  readonly starts: number[]
  readonly ends: number[]
  readonly decoded: Array<string | undefined>
}

function newKeyStack (): KeyStack {
  return { top: 0, hashes: [], starts: [], ends: [], decoded: [] }
}

function pushKey (keys: KeyStack, hash: number, start: number, end: number, decoded: string | undefined): void {
  const k = keys.top++
  keys.hashes[k] = hash
  keys.starts[k] = start
  keys.ends[k] = end
  keys.decoded[k] = decoded
}

/** The same hash as the scan computes over a key's characters. */
function hashOf (key: string): number {
  let hash = 0
  for (let j = 0; j < key.length; j++) hash = (Math.imul(hash, 31) + key.charCodeAt(j)) | 0
  return hash
}

function keyText (text: string, keys: KeyStack, k: number): string {
  return keys.decoded[k] ?? text.slice((keys.starts[k] as number) + 1, keys.ends[k])
}

/** Whether key `k` of the stack is the key quoted from `start` to `end` (or, when escaped, `decoded`). */
function sameKey (text: string, keys: KeyStack, k: number, start: number, end: number, decoded: string | undefined): boolean {
  const other = keys.decoded[k]
  if (decoded !== undefined || other !== undefined) return keyText(text, keys, k) === (decoded ?? text.slice(start + 1, end))
  const from = keys.starts[k] as number
  if ((keys.ends[k] as number) - from !== end - start) return false
  for (let j = 1; j < end - start; j++) if (text.charCodeAt(from + j) !== text.charCodeAt(start + j)) return false
  return true
}

/** The refusal for a key spelled without escapes, quoted from `start` to `end`; undefined when it is fine. */
function plainKeyProblem (text: string, start: number, end: number, underConstructor: boolean): string | undefined {
  // "__proto__" and "prototype" are both nine characters long.
  if (end - start !== 10) return undefined
  if (text.startsWith('__proto__', start + 1)) return keyProblem('__proto__', underConstructor)
  if (underConstructor && text.startsWith('prototype', start + 1)) return keyProblem('prototype', underConstructor)
  return undefined
}

function keyProblem (key: string, underConstructor: boolean): string | undefined {
  if (key === '__proto__') return 'the key "__proto__" is not allowed'
  if (key === 'prototype' && underConstructor) return 'the key "constructor.prototype" is not allowed'
  return undefined
}

function duplicateKey (key: string): string {
  return `duplicate key "${printable(key)}" in one object`
}

function printable (key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key
}
