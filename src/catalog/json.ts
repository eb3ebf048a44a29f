import { isInteger, isLosslessNumber, isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json'
import { badRequest } from './errors.js'

/**
 * Lossless JSON for the catalog. Iceberg snapshot ids are 63-bit longs (e.g. 3055729675574597004)
 * that `JSON.parse` would round, so every body and metadata file goes through lossless-json:
 * numbers a double holds exactly stay `number`, the others stay `LosslessNumber` with their digits.
 */
export type JsonObject = Record<string, unknown>

function parseNumber (text: string): number | LosslessNumber {
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text)
}

/** Parses JSON text, keeping big numbers exact; conflicting duplicate keys are a syntax error. */
export function parseJson (text: string): unknown {
  return parse(text, null, { parseNumber })
}

/** Parses a request body; any syntax problem is a 400 naming where it is. */
export function parseBody (body: Buffer): unknown {
  try {
    return parseJson(body.toString('utf8'))
  } catch (err) {
    throw badRequest(`Malformed request: ${(err as Error).message}`)
  }
}

export function stringifyJson (value: unknown, space?: number): string {
  return stringify(value, null, space) ?? 'null'
}

export function isObject (v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v)
}

/** An integer of any size as bigint, or undefined when `v` is not an integer. */
export function toBig (v: unknown): bigint | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : undefined
  if (isLosslessNumber(v)) return isInteger(v.value) ? BigInt(v.value) : undefined
  return undefined
}

/** The JSON value for an integer: a plain number when exact, a LosslessNumber otherwise. */
export function fromBig (b: bigint): number | LosslessNumber {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(b)
    : new LosslessNumber(b.toString())
}

/** A canonical string key for a 64-bit id (snapshot ids), so ids compare by value, never rounded. */
export function idKey (v: unknown): string | undefined {
  return toBig(v)?.toString()
}

/** Deep copy of parsed JSON; LosslessNumber values are immutable and shared. */
export function cloneJson<T> (v: T): T {
  if (Array.isArray(v)) return v.map(cloneJson) as T
  if (isObject(v)) {
    const out: JsonObject = Object.getPrototypeOf(v) === null ? Object.create(null) : {}
    for (const k of Object.keys(v)) defineOwn(out, k, cloneJson(v[k]))
    return out as T
  }
  return v
}

/** Sets an own property even for the key `__proto__` (plain assignment would change the prototype). */
export function defineOwn (obj: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true })
}

/** Structural equality of parsed JSON; numbers compare by value whatever their representation. */
export function jsonEqual (a: unknown, b: unknown): boolean {
  if (a === b) return true
  const ba = toBig(a)
  const bb = toBig(b)
  if (ba !== undefined && bb !== undefined) return ba === bb
  if (isLosslessNumber(a) || isLosslessNumber(b)) return Number(a) === Number(b) && String(a) === String(b)
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]))
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter(k => a[k] !== undefined)
    const kb = Object.keys(b).filter(k => b[k] !== undefined)
    return ka.length === kb.length && ka.every(k => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}
