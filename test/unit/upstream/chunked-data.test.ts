/**
 * The chunk data `ChunkedScanner` shows a reader (src/upstream/lane/chunked-scanner.ts): the
 * payload of a chunked body (RFC 9112 §7.1), sizes, extensions and trailers dropped, however the
 * bytes are split across reads.
 */
import t from 'tap'
import fc from 'fast-check'
import { ChunkedScanner } from '../../../src/upstream/lane/chunked-scanner.js'

/** Scans `wire` in the given pieces; the payload and where the message ended (in `wire`), or -2. */
function payload (wire: Buffer, cuts: readonly number[]): { data: Buffer, end: number } {
  const scanner = new ChunkedScanner()
  const kept: Buffer[] = []
  const keep = (buf: Buffer, from: number, to: number): void => { kept.push(Buffer.from(buf.subarray(from, to))) }
  const bounds = [...new Set([0, ...cuts.filter(c => c > 0 && c < wire.length), wire.length])].sort((a, b) => a - b)
  for (let i = 0; i + 1 < bounds.length; i++) {
    const from = bounds[i] as number
    // Each piece in a buffer of its own, reused afterwards (as the pool's read buffer is).
    const piece = Buffer.from(wire.subarray(from, bounds[i + 1]))
    const end = scanner.scan(piece, 0, keep)
    piece.fill(0x78)
    if (end < 0 && end !== -1) return { data: Buffer.concat(kept), end }
    if (end >= 0) return { data: Buffer.concat(kept), end: from + end }
  }
  return { data: Buffer.concat(kept), end: -1 }
}

t.test('sizes, extensions and trailers', async t => {
  const wire = Buffer.from('5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\ntrailer: x\r\n\r\n')
  t.same(payload(wire, []), { data: Buffer.from('hello world'), end: wire.length })
  t.same(payload(Buffer.from('0\r\n\r\n'), []), { data: Buffer.alloc(0), end: 5 }, 'an empty body')
  t.equal(payload(Buffer.from('A\r\n0123456789\r\n0\r\n\r\n'), []).data.toString(), '0123456789', 'hex sizes')
  t.equal(payload(Buffer.from('a\r\n0123456789\r\n0\r\n\r\n'), []).data.toString(), '0123456789', 'in either case')
  t.equal(payload(Buffer.from('5\r\nhelloXX0\r\n\r\n'), []).end, -2, 'chunk data not followed by CRLF')
  const next = Buffer.from('3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n')
  t.same(payload(next, []), { data: Buffer.from('abc'), end: 13 }, 'the end, with bytes of the next message after it')
})

t.test('property: the payload is the same however the body is split and chunked', async t => {
  const arbitrary = fc.record({
    pieces: fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { maxLength: 12 }),
    upper: fc.boolean(),
    ext: fc.boolean(),
    trailers: fc.array(fc.constantFrom('x-a: 1', 'x-b: two'), { maxLength: 2 }),
    cuts: fc.array(fc.nat({ max: 700 }), { maxLength: 20 })
  })
  fc.assert(fc.property(arbitrary, ({ pieces, upper, ext, trailers, cuts }) => {
    let wire = Buffer.alloc(0)
    for (const p of pieces) {
      const size = upper ? p.length.toString(16).toUpperCase() : p.length.toString(16)
      wire = Buffer.concat([wire, Buffer.from(`${size}${ext ? ';name="v"' : ''}\r\n`, 'latin1'), p, Buffer.from('\r\n', 'latin1')])
    }
    wire = Buffer.concat([wire, Buffer.from(`0\r\n${trailers.map(f => `${f}\r\n`).join('')}\r\n`, 'latin1')])
    const { data, end } = payload(wire, cuts)
    return end === wire.length && data.equals(Buffer.concat(pieces.map(p => Buffer.from(p))))
  }), { numRuns: 300 })
  t.pass('300 splits read the same payload')
})
