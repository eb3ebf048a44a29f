/**
 * A fast reader for JSON the upstream sends (loadTable answers): V8's native `JSON.parse`, with
 * only the integers it would round kept exact.
 *
 * `lossless-json` is a JavaScript parser several times slower than `JSON.parse`; on a typical base
 * (50 columns, 20 schemas of history, ~80 KB) it was most of a schema commit's CPU. The gate reads
 * an answer, never writes it back, and needs exact text for one kind of value only: integers past
 * 2^53 (snapshot ids in `refs` and `current-snapshot-id`, long defaults). One flat pass over the
 * text bounds the nesting depth and finds those integer tokens; each is handed to `JSON.parse` as a
 * marked string and turned into a `LosslessNumber` afterwards. Every other number is a plain
 * number, which every reader of the tree accepts (`json-values.ts`).
 *
 * Keys are the upstream's business: a repeated key keeps its last value, as `JSON.parse` and
 * Jackson do, and `__proto__` is an own property like any other (never a prototype).
 */
import { LosslessNumber } from 'lossless-json'

/** Marks a long integer inside a string; a JSON text could only produce it through a `\u0001` escape, which sends the text to the slow path. */
const MARK = '\u0001'
const MARK_ESCAPE = '\\u0001'

// An integer of 16 or more digits may exceed 2^53 (9007199254740992); shorter ones are exact.
const SAFE_DIGITS = 15

export type JsonRead =
  | { readonly ok: true, readonly value: unknown }
  | { readonly ok: false, readonly problem: string }

/**
 * Parses `text`. `slow` is called instead when the text contains the marker's escape (a body
 * nobody sends; the result is the same, only slower).
 */
export function parseKeepingLongs (text: string, maxDepth: number, slow: (text: string) => unknown): JsonRead {
  const longs: Array<[number, number]> = []
  let depth = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string: skip it, escapes included
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if (d === 0x22) break
        if (d === 0x5c) i++
        i++
      }
    } else if (c === 0x7b || c === 0x5b) { // { [
      if (++depth > maxDepth) return { ok: false, problem: `nesting deeper than ${maxDepth} levels` }
    } else if (c === 0x7d || c === 0x5d) { // } ]
      depth--
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // a number token
      const start = i
      let digits = 0
      let integer = true
      for (; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d >= 0x30 && d <= 0x39) digits++
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || (d === 0x2d && i > start)) integer = false
        else if (!(d === 0x2d && i === start)) break
      }
      if (integer && digits > SAFE_DIGITS) longs.push([start, i])
      i--
    }
  }
  try {
    if (longs.length === 0) return { ok: true, value: JSON.parse(text) }
    if (text.includes(MARK_ESCAPE)) return { ok: true, value: slow(text) }
    let marked = ''
    let from = 0
    for (const [start, end] of longs) {
      marked += `${text.slice(from, start)}"${MARK_ESCAPE}${text.slice(start, end)}"`
      from = end
    }
    marked += text.slice(from)
    return { ok: true, value: revive(JSON.parse(marked)) }
  } catch (err) {
    return { ok: false, problem: `invalid JSON: ${(err as Error).message}` }
  }
}

function revive (value: unknown): unknown {
  if (typeof value === 'string') return value.charCodeAt(0) === 1 && value.startsWith(MARK) ? new LosslessNumber(value.slice(1)) : value
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i]
      if (typeof v === 'object' || typeof v === 'string') value[i] = revive(v)
    }
    return value
  }
  const o = value as Record<string, unknown>
  for (const key of Object.keys(o)) {
    const v = o[key]
    if (typeof v !== 'object' && typeof v !== 'string') continue
    const r = revive(v)
    if (r === v) continue
    // Defined, not assigned: an own `__proto__` key must stay data.
    Object.defineProperty(o, key, { value: r, writable: true, enumerable: true, configurable: true })
  }
  return o
}
