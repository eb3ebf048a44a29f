import { isLosslessNumber, isSafeNumber, type LosslessNumber } from 'lossless-json'

/**
 * A lossless JSON tree with every number a JS number holds exactly turned into one. Integers beyond
 * 2^53 (snapshot ids) stay `LosslessNumber`, so schema validation sees plain values and nothing
 * downstream can round a 64-bit id by accident.
 */
export function toPlainJson (value: unknown): unknown {
  if (isLosslessNumber(value)) {
    const text = (value as LosslessNumber).value
    return isSafeNumber(text) ? Number(text) : value
  }
  if (Array.isArray(value)) return value.map(toPlainJson)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = toPlainJson(v)
    return out
  }
  return value
}
