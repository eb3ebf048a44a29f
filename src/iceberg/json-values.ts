/**
 * Small readers for untrusted wire JSON. Numbers may arrive as plain numbers (JSON.parse) or as
 * `LosslessNumber` objects (lossless-json), which keep 64-bit snapshot ids intact; both are
 * accepted everywhere. Reads go through own properties only, so a `__proto__` key in the input
 * can never reach a prototype.
 */

export type JsonObject = Readonly<Record<string, unknown>>

export function isObject (v: unknown): v is JsonObject {
  // A LosslessNumber is an object in JS but a number in JSON.
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLossless(v)
}

/** Own property of a JSON object, never an inherited one. */
export function own (o: JsonObject, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined
}

/**
 * Reads one fixed set of keys from many JSON objects, own properties only, at the price of plain
 * property reads: `own()` on every key of every field is a generic keyed lookup each time, and a
 * 100,000-field schema has 700,000 of them. Made once per parse, it checks that Object.prototype
 * carries none of the keys; a plain object (prototype Object.prototype or null, as JSON parsers
 * make them) is then read as it is, anything else through a copy of just its own keys.
 */
export class OwnKeys<K extends string> {
  private readonly direct: boolean
  constructor (private readonly keys: readonly K[]) {
    this.direct = !keys.some(k => k in Object.prototype)
  }

  /** `o` (or a null-prototype copy of its own `keys`) to read those keys from directly. */
  of (o: JsonObject): { readonly [P in K]?: unknown } {
    if (this.direct) {
      const proto: unknown = Object.getPrototypeOf(o)
      if (proto === Object.prototype || proto === null) return o as { readonly [P in K]?: unknown }
    }
    const copy: { [P in K]?: unknown } = Object.create(null)
    for (const k of this.keys) if (Object.hasOwn(o, k)) copy[k] = o[k]
    return copy
  }
}

export function isLossless (v: unknown): v is { toString (): string } {
  return typeof v === 'object' && v !== null && (v as { isLosslessNumber?: unknown }).isLosslessNumber === true
}

const INTEGER_TEXT = /^-?\d+$/

/** A JSON integer that fits a JS number exactly (field ids, schema ids, format versions). */
export function toInt (v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined
  if (isLossless(v)) {
    const text = v.toString()
    if (!INTEGER_TEXT.test(text)) return undefined
    const n = Number(text)
    return Number.isSafeInteger(n) ? n : undefined
  }
  return undefined
}

/** A 64-bit id as its decimal text, every digit kept (snapshot ids). */
export function toLongText (v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v).toString() : undefined
  if (typeof v === 'bigint') return v.toString()
  if (isLossless(v)) {
    const text = v.toString()
    return INTEGER_TEXT.test(text) ? BigInt(text).toString() : undefined
  }
  if (typeof v === 'string' && INTEGER_TEXT.test(v)) return BigInt(v).toString()
  return undefined
}

/** Deep equality of JSON values; a LosslessNumber equals a number of the same value. */
export function jsonEquals (a: unknown, b: unknown): boolean {
  if (a === b) return true
  const an = numericText(a)
  const bn = numericText(b)
  if (an !== undefined || bn !== undefined) return an !== undefined && an === bn
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i], b[i])) return false
    return true
  }
  if (isObject(a) && isObject(b)) {
    const ak = Object.keys(a)
    if (ak.length !== Object.keys(b).length) return false
    for (const k of ak) if (!Object.hasOwn(b, k) || !jsonEquals(a[k], b[k])) return false
    return true
  }
  return false
}

function numericText (v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined
  if (isLossless(v)) {
    const n = Number(v.toString())
    // Compare by value: "1.0" and 1 are the same default.
    return Number.isSafeInteger(n) || !INTEGER_TEXT.test(v.toString()) ? String(n) : BigInt(v.toString()).toString()
  }
  return undefined
}

/** A short, safe rendering of a JSON value for messages. */
export function showValue (v: unknown): string {
  if (v === undefined) return 'none'
  if (isLossless(v)) return v.toString()
  try {
    const text = JSON.stringify(v, (_k, x: unknown) => isLossless(x) ? x.toString() : typeof x === 'bigint' ? String(x) : x)
    return text === undefined ? String(v) : text.length > 80 ? text.slice(0, 77) + '...' : text
  } catch {
    return String(v)
  }
}

/**
 * A string → string map (properties, a summary) with a null prototype, so a `__proto__` key is
 * data; absent and null read as empty. Undefined when `raw` is not an object of strings.
 */
export function readStringMap (raw: unknown): Record<string, string> | undefined {
  const out: Record<string, string> = Object.create(null)
  if (raw === undefined || raw === null) return out
  if (!isObject(raw)) return undefined
  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (typeof value !== 'string') return undefined
    out[key] = value
  }
  return out
}
