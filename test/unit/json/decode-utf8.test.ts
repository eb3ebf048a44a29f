/**
 * `decodeUtf8` over the pieces a body arrived in (src/json/parse-commit-body.ts): the same text as
 * decoding the joined bytes, wherever the pieces are cut (inside a multi-byte sequence too), and
 * undefined for bytes that are not UTF-8 whichever way they are cut.
 */
import t from 'tap'
import fc from 'fast-check'
import { decodeUtf8 } from '../../../src/json/parse-commit-body.js'

/** `bytes` cut at `cuts` into pieces of their own. */
function cut (bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const bounds = [...new Set([0, ...cuts.map(c => c % (bytes.length + 1)), bytes.length])].sort((a, b) => a - b)
  const pieces: Buffer[] = []
  for (let i = 0; i + 1 < bounds.length; i++) pieces.push(Buffer.from(bytes.subarray(bounds[i], bounds[i + 1])))
  return pieces
}

t.test('sequences split between pieces', async t => {
  const text = '{"name":"é€𝄞","id":9223372036854775807}'
  const bytes = Buffer.from(text)
  for (let i = 0; i <= bytes.length; i++) {
    t.equal(decodeUtf8(cut(bytes, [i])), text, `cut at ${i}`)
  }
  t.equal(decodeUtf8(cut(Buffer.from('ab€cd'), [3, 4])), 'ab€cd', 'a three-byte sequence over three pieces')
  t.equal(decodeUtf8([Buffer.from('ab'), Buffer.alloc(0), Buffer.from('cd')]), 'abcd', 'empty pieces')
  t.equal(decodeUtf8([]), '', 'no piece')
})

t.test('a byte order mark is dropped only at the start', async t => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf])
  t.equal(decodeUtf8([bom, Buffer.from('{}')]), '{}')
  t.equal(decodeUtf8([Buffer.concat([bom, Buffer.from('{"a":')]), Buffer.from('1}')]), '{"a":1}')
  t.equal(decodeUtf8([Buffer.from('{"a":"'), bom, Buffer.from('"}')]), '{"a":"\ufeff"}', 'inside the text it is a character')
  t.equal(decodeUtf8([Buffer.from('{"a":"x'), Buffer.concat([bom, Buffer.from('é"}')])]), '{"a":"x\ufeffé"}')
})

t.test('not UTF-8', async t => {
  t.equal(decodeUtf8([Buffer.from('ab'), Buffer.from([0xc3]), Buffer.from('cd')]), undefined, 'a sequence cut short by ASCII')
  t.equal(decodeUtf8([Buffer.from('abcd'), Buffer.from([0xe2, 0x82])]), undefined, 'a sequence open at the end')
  t.equal(decodeUtf8([Buffer.from('abcd'), Buffer.from([0xff]), Buffer.from('abcd')]), undefined, 'a byte never in UTF-8')
  t.equal(decodeUtf8([Buffer.from([0xe2, 0x82, 0xac, 0xe2]), Buffer.from('abcd')]), undefined, 'open after a whole sequence, then ASCII')
  t.equal(decodeUtf8([Buffer.from([0xe2]), Buffer.from([0x82]), Buffer.from('abcd'), Buffer.from([0xac])]), undefined,
    'ASCII between the bytes of one sequence')
})

t.test('property: the pieces decode as the joined bytes do', async t => {
  const bytes = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 60 }).map(s => Buffer.from(s)),
    fc.uint8Array({ maxLength: 40 }).map(a => Buffer.from(a)),
    fc.tuple(fc.string({ unit: 'binary', maxLength: 30 }), fc.uint8Array({ maxLength: 4 }), fc.string({ maxLength: 10 }))
      .map(([a, b, c]) => Buffer.concat([Buffer.from(a), Buffer.from(b), Buffer.from(c)]))
  )
  fc.assert(fc.property(bytes, fc.array(fc.nat(), { maxLength: 12 }), (whole, cuts) => {
    return decodeUtf8(cut(whole, cuts)) === decodeUtf8(whole)
  }), { numRuns: 2000 })
  t.pass('2,000 cuts decode alike')
})
