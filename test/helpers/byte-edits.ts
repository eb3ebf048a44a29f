/**
 * Random byte edits for the property tests of the JSON code: each edit inserts, deletes or replaces
 * one byte at a position taken modulo the current length, so any `fc.nat()` lands in the text.
 */
import fc from 'fast-check'

export type ByteEdit = [number, string, number]

/** An edit that puts one of `bytes` in (or deletes a byte). */
export function byteEdit (bytes: readonly number[]): fc.Arbitrary<ByteEdit> {
  return fc.tuple(fc.nat(), fc.constantFrom('insert', 'delete', 'replace'), fc.constantFrom(...bytes))
}

export function applyEdits (input: string | Buffer, edits: readonly ByteEdit[]): Buffer {
  const bytes = [...(typeof input === 'string' ? Buffer.from(input) : input)]
  for (const [at, how, byte] of edits) {
    const i = bytes.length === 0 ? 0 : at % (bytes.length + (how === 'insert' ? 1 : 0))
    if (how === 'insert') bytes.splice(i, 0, byte)
    else if (how === 'delete') bytes.splice(i, 1)
    else bytes[i] = byte
  }
  return Buffer.from(bytes)
}
