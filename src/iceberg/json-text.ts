/**
 * JSON text ↔ JSON values without losing a number. Iceberg snapshot ids are 64-bit longs (e.g.
 * 3055729675574597004) that `JSON.parse` rounds: numbers a double holds exactly are read as
 * `number`, the others as `LosslessNumber` with every digit, and written back as those digits.
 */
import { isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json'
import { isLossless } from './json-values.js'

function readNumber (text: string): number | LosslessNumber {
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text)
}

/**
 * Parses JSON text, big numbers kept exact. Throws a `SyntaxError` naming the position for text
 * that is not JSON, including an object that repeats a key with another value (a reader could
 * keep either copy). `lossless-json` is a JavaScript parser, several times slower than
 * `JSON.parse`: it reads request bodies and metadata files, never a hot path of the gate.
 */
export function parseJsonText (text: string): unknown {
  return parse(text, null, readNumber)
}

/** Marks a lossless number inside a string while `JSON.stringify` runs; see `writeJson`. */
const MARK = '\u0001'
const MARKED = /"\\u0001(-?\d[\d.eE+-]*)"/g

/**
 * Writes a JSON value as text, every `LosslessNumber` as its own digits. `JSON.stringify` does the
 * work (it is native, `lossless-json`'s writer is not): each lossless number becomes a marked
 * string that is then unquoted. A value whose own strings hold the marker character goes through
 * `lossless-json` instead, so no string of the data can ever be unquoted.
 */
export function writeJson (value: unknown): string {
  let marks = 0
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (isLossless(v)) {
      marks++
      return MARK + v.toString()
    }
    return v
  })
  if (text === undefined) return 'null'
  if (marks === 0) return text
  let found = 0
  const out = text.replace(MARKED, (_m, digits: string) => { found++; return digits })
  return found === marks ? out : (stringify(value) ?? 'null')
}

/** The JSON value of a 64-bit integer given as decimal text: a number when a double holds it exactly, else its digits. */
export function longValue (text: string): number | LosslessNumber {
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : new LosslessNumber(text)
}
