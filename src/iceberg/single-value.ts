/**
 * Single values in JSON (spec Appendix D, "JSON single-value serialization"): whether a JSON value
 * is a valid value of a primitive type, in the form the spec gives for it. Field defaults are
 * written this way (Appendix C). Numbers may be plain or `LosslessNumber` (their exact text).
 *
 * The checks follow the spec's table; where Java's `SingleValueParser` reads more loosely or more
 * strictly, the spec decides and docs/engines.md lists the difference.
 */
import { isLossless } from './json-values.js'
import type { PrimitiveType } from './types.js'

const INT_MIN = -(2n ** 31n)
const INT_MAX = 2n ** 31n - 1n
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
/** Largest finite float32. */
const FLOAT_MAX = 3.4028234663852886e38

const INTEGER = /^-?\d+$/
// java.math.BigDecimal's string grammar: sign, digits with an optional point, optional exponent.
const DECIMAL_TEXT = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/
// ISO-8601 as java.time reads it (ISO_LOCAL_DATE / ISO_LOCAL_TIME): four-digit years, or more
// digits with a sign; seconds optional; fractions of up to nine digits.
const DATE = /^([+-]\d{4,9}|\d{4})-(\d{2})-(\d{2})$/
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const HEX = /^(?:[0-9a-f]{2})*$/i

/** The exact text of a JSON number, or undefined for anything else. */
function numberText (v: unknown): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined
  return isLossless(v) ? v.toString() : undefined
}

function integerIn (v: unknown, min: bigint, max: bigint): boolean {
  const text = numberText(v)
  if (text === undefined || !INTEGER.test(text)) return false
  const n = BigInt(text)
  return n >= min && n <= max
}

function daysIn (year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

function dateProblem (text: string): string | undefined {
  const m = DATE.exec(text)
  if (m === null) return 'is not an ISO-8601 date (yyyy-mm-dd)'
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return 'is not a calendar date'
  return undefined
}

/** `digits`: most fraction digits the type keeps (6 for microseconds, 9 for nanoseconds). */
function timeProblem (text: string, digits: number): string | undefined {
  const m = TIME.exec(text)
  if (m === null) return 'is not an ISO-8601 time (hh:mm:ss[.ffffff])'
  if (Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return 'is not a time of day'
  if ((m[4]?.length ?? 0) > digits) return `has more than ${digits} fraction digits (${digits === 6 ? 'microsecond' : 'nanosecond'} precision)`
  return undefined
}

/** `zone`: the timestamp must end in `+00:00` (with zone) or carry no offset (without). */
function timestampProblem (text: string, digits: number, zone: boolean): string | undefined {
  const t = text.indexOf('T')
  if (t === -1) return 'is not an ISO-8601 timestamp (yyyy-mm-ddThh:mm:ss)'
  let time = text.slice(t + 1)
  if (zone) {
    // Appendix D: "must include a zone offset and it must be '+00:00'".
    if (!time.endsWith('+00:00')) return 'must end with the offset +00:00'
    time = time.slice(0, -6)
  } else if (/[zZ]$|[+-]\d{2}:?\d{2}$/.test(time)) {
    return 'must not include a zone offset'
  }
  return dateProblem(text.slice(0, t)) ?? timeProblem(time, digits)
}

function decimalProblem (text: string, precision: number, scale: number): string | undefined {
  const m = DECIMAL_TEXT.exec(text)
  const whole = m?.[1] ?? ''
  const fraction = m?.[2] ?? ''
  if (m === null || whole.length + fraction.length === 0) return 'is not a decimal number'
  // BigDecimal: the scale is the number of fraction digits minus the exponent.
  const exponent = m[3] === undefined ? 0 : Number(m[3])
  const valueScale = fraction.length - exponent
  if (valueScale !== scale) return `has scale ${valueScale}, the type's is ${scale}`
  const digits = (whole + fraction).replace(/^0+/, '').length
  if (digits > precision) return `has ${digits} digits, more than the precision ${precision}`
  return undefined
}

/**
 * Why `value` is not a valid single value of `type`, or undefined when it is. `value` is neither
 * undefined nor null (a null default is always valid).
 */
export function singleValueProblem (type: PrimitiveType, value: unknown): string | undefined {
  switch (type.kind) {
    case 'boolean': return typeof value === 'boolean' ? undefined : 'is not a JSON boolean'
    case 'int': return integerIn(value, INT_MIN, INT_MAX) ? undefined : 'is not an int (a JSON integer from -2^31 to 2^31-1)'
    case 'long': return integerIn(value, LONG_MIN, LONG_MAX) ? undefined : 'is not a long (a JSON integer from -2^63 to 2^63-1)'
    case 'float':
    case 'double': {
      const text = numberText(value)
      const n = text === undefined ? Number.NaN : Number(text)
      if (!Number.isFinite(n)) return `is not a ${type.kind} (a finite JSON number)`
      return type.kind === 'float' && Math.abs(n) > FLOAT_MAX ? 'is out of the float range' : undefined
    }
    case 'string': return typeof value === 'string' ? undefined : 'is not a JSON string'
    case 'unknown':
    case 'variant':
    case 'geometry':
    case 'geography':
      return `must be null for type ${type.kind}`
    default:
      break
  }
  if (typeof value !== 'string') return `is not a JSON string (the ${type.kind} form in spec Appendix D)`
  switch (type.kind) {
    case 'decimal': return decimalProblem(value, type.precision, type.scale)
    case 'date': return dateProblem(value)
    case 'time': return timeProblem(value, 6)
    case 'timestamp': return timestampProblem(value, 6, false)
    case 'timestamptz': return timestampProblem(value, 6, true)
    case 'timestamp_ns': return timestampProblem(value, 9, false)
    case 'timestamptz_ns': return timestampProblem(value, 9, true)
    case 'uuid': return UUID.test(value) ? undefined : 'is not a UUID (8-4-4-4-12 hexadecimal digits)'
    case 'fixed':
      if (!HEX.test(value)) return 'is not a hexadecimal string'
      return value.length === type.length * 2 ? undefined : `has ${value.length / 2} bytes, the type holds ${type.length}`
    case 'binary': return HEX.test(value) ? undefined : 'is not a hexadecimal string (two digits per byte)'
  }
  return undefined
}
