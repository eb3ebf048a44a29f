/**
 * The shared lexical layer (src/json/scan.ts) against `JSON.parse`: the same texts are valid, and
 * on generated documents (escapes of every kind, lone and paired surrogates, multi-byte UTF-8,
 * deep nesting, whitespace anywhere) every string and number token ends where the writer ended it,
 * in the byte form and in the text form alike.
 */
import fc from 'fast-check'
import t from 'tap'
import { applyEdits, byteEdit } from '../../helpers/byte-edits.js'
import { isUtf8 } from 'node:buffer'
import {
  CLOSE_BRACE, CLOSE_BRACKET, COMMA, decodeString, depthProblem, equalsIgnoreAsciiCase, isWs, keepsExact, keyIs, literalEnd,
  colonValue, memberValue, NUMBER, numberEnd, numberTokenEnd, OPEN_BRACE, OPEN_BRACKET, plainText, QUOTE, quoteEnd, scalarEnd,
  skipWs, stringEnd, stringToken, valueEnd
} from '../../../src/json/scan.js'

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Whether `JSON.parse` accepts the bytes as one UTF-8 JSON text (a BOM is not JSON whitespace). */
function parses (raw: Buffer): boolean {
  try {
    JSON.parse(fatal.decode(raw))
    return true
  } catch {
    return false
  }
}

/** Whether the byte form accepts the bytes as one JSON text, with no depth bound to speak of. */
function scans (raw: Buffer, plain?: string): boolean {
  const end = valueEnd(raw, 0, Infinity, plain)
  return end !== -1 && skipWs(raw, end) === raw.length && isUtf8(raw)
}

/** A token the writer put down: its kind and where it is, in bytes and in UTF-16 units. */
interface Token { kind: 'string' | 'number' | 'literal', byteStart: number, byteEnd: number, start: number, end: number }

/** A JSON value and its written forms: the text, and the tokens it holds in document order. */
type Tree = { s: string } | { n: string } | { l: 'true' | 'false' | 'null' } | { a: Tree[] } | { o: Array<[string, Tree]> }

/** Characters that stress strings: ASCII, escapes' targets, 2-, 3- and 4-byte UTF-8, surrogate halves. */
const char = fc.oneof(
  fc.constantFrom('a', 'Z', ' ', '"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', 'é', 'ß', '€', '\u2028', '\uffff', '🧊', '\ud800', '\udfff'),
  fc.string({ unit: 'binary', maxLength: 2 })
)
const str = fc.array(char, { maxLength: 6 }).map(cs => cs.join(''))
const digits = fc.stringMatching(/^\d{1,20}$/)
const numberText = fc.tuple(fc.boolean(), fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9]\d{0,24}$/)), fc.option(digits), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits)))
  .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`)

const { tree } = fc.letrec<{ tree: Tree }>(tie => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    str.map(s => ({ s })),
    numberText.map(n => ({ n })),
    fc.constantFrom('true', 'false', 'null').map(l => ({ l: l as 'true' | 'false' | 'null' })),
    fc.array(tie('tree'), { maxLength: 4 }).map(a => ({ a })),
    fc.array(fc.tuple(str, tie('tree')), { maxLength: 4 }).map(o => ({ o })))
}))

/** How one character may be written in a string: plainly when JSON allows it, short-escaped, or `\u`. */
function writeChar (c: string, how: number): string {
  const code = c.charCodeAt(0)
  const short: Record<string, string> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' }
  const u = `\\u${code.toString(16).padStart(4, '0')}`
  const lone = code >= 0xd800 && code <= 0xdfff
  if (how % 3 === 2 || lone || (code < 0x20 && short[c] === undefined)) return how % 2 === 0 ? u : u.toUpperCase().replace('\\U', '\\u')
  if (how % 3 === 1 && short[c] !== undefined) return short[c]
  return c === '"' || c === '\\' || code < 0x20 ? (short[c] as string) : c
}

/** Writes `tree` with the whitespace and escape choices `pick` makes, recording each token. */
function write (tree: Tree, pick: () => number): { text: string, tokens: Token[] } {
  let text = ''
  const tokens: Token[] = []
  const ws = (): void => { text += ['', '', ' ', '\n', '\t', '\r\n  '][pick() % 6] as string }
  const token = (kind: Token['kind'], body: string): void => {
    const start = text.length
    const byteStart = Buffer.byteLength(text)
    text += body
    tokens.push({ kind, start, end: text.length, byteStart, byteEnd: byteStart + Buffer.byteLength(body) })
  }
  const string = (s: string): void => {
    // Split into code points so that a surrogate pair stays one character (or two `\u` escapes).
    let body = '"'
    for (const c of s) body += c.length === 2 && pick() % 2 === 0 ? c : [...c].map(h => writeChar(h, pick())).join('')
    token('string', `${body}"`)
  }
  const value = (v: Tree): void => {
    ws()
    if ('s' in v) string(v.s)
    else if ('n' in v) token('number', v.n)
    else if ('l' in v) token('literal', v.l)
    else if ('a' in v) {
      text += '['
      v.a.forEach((x, k) => { if (k > 0) text += ','; value(x) })
      ws()
      text += ']'
    } else {
      text += '{'
      v.o.forEach(([key, x], k) => {
        if (k > 0) text += ','
        ws()
        string(key)
        ws()
        text += ':'
        value(x)
      })
      ws()
      text += '}'
    }
    ws()
  }
  value(tree)
  return { text, tokens }
}

/** The tokens the byte form finds, walking the grammar with the shared primitives. */
function bytesTokens (raw: Buffer, plain?: string): Array<[number, number]> | undefined {
  const out: Array<[number, number]> = []
  let i = skipWs(raw, 0)
  const value = (): boolean => {
    const c = raw[i]
    if (c === QUOTE) {
      const end = stringEnd(raw, i, plain)
      if (end === -1) return false
      out.push([i, end])
      i = end
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const object = c === OPEN_BRACE
      i = skipWs(raw, i + 1)
      if (raw[i] === (object ? CLOSE_BRACE : CLOSE_BRACKET)) { i++; return true }
      for (;;) {
        if (object) {
          if (raw[i] !== QUOTE) return false
          const keyEnd = stringEnd(raw, i, plain)
          const v = keyEnd === -1 ? -1 : colonValue(raw, keyEnd)
          if (v === -1 || memberValue(raw, i, plain) !== v) return false
          out.push([i, keyEnd])
          i = v
        }
        if (!value()) return false
        i = skipWs(raw, i)
        if (raw[i] === COMMA) { i = skipWs(raw, i + 1); continue }
        if (raw[i] !== (object ? CLOSE_BRACE : CLOSE_BRACKET)) return false
        i++
        return true
      }
    } else {
      const end = scalarEnd(raw, i)
      if (end === -1) return false
      out.push([i, end])
      i = end
    }
    return true
  }
  return value() ? out : undefined
}

t.test('token boundaries: the byte form and the text form end every token where the writer did', async t => {
  let plainRuns = 0
  fc.assert(fc.property(tree, fc.infiniteStream(fc.nat()), (v, choices) => {
    const pick = (): number => choices.next().value as number
    const { text, tokens } = write(v, pick)
    const raw = Buffer.from(text)
    // The writer's text is JSON, and the whole of it is one value for the byte form.
    if (!parses(raw) || !scans(raw)) return false
    const plain = plainText(raw)
    if (plain === null) return false
    if (plain !== undefined) plainRuns++
    for (const form of plain === undefined ? [undefined] : [undefined, plain]) {
      const found = bytesTokens(raw, form)
      if (found === undefined || found.length !== tokens.length) return false
      if (!tokens.every((tk, k) => found[k]?.[0] === tk.byteStart && found[k]?.[1] === tk.byteEnd)) return false
    }
    for (const tk of tokens) {
      const slice = text.slice(tk.start, tk.end)
      if (tk.kind === 'string') {
        // Text form: the closing quote, and the token decodes on its own.
        if (quoteEnd(text, tk.start) !== tk.end - 1 || decodeString(slice) === undefined) return false
        // The escape flags say what the token holds.
        stringEnd(raw, tk.byteStart)
        if (stringToken.escaped !== slice.includes('\\') || stringToken.unicode !== /(^|[^\\])(\\\\)*\\u/.test(slice)) return false
      } else if (tk.kind === 'number') {
        if (numberTokenEnd(text, tk.start) !== tk.end || !NUMBER.test(slice)) return false
        if (numberEnd(raw, tk.byteStart) !== tk.byteEnd) return false
      } else if (literalEnd(raw, tk.byteStart) !== tk.byteEnd) {
        return false
      }
    }
    return true
  }), { numRuns: 3000 })
  t.ok(plainRuns > 100, `${plainRuns} documents also took the native-search path`)
})

/** Bytes a random edit may put in: structure, escapes, digits, controls, non-ASCII, invalid UTF-8. */
const EDIT_BYTES = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x09, 0x0d, 0x00, 0x0b, 0x1f,
  0x7f, 0x80, 0xbf, 0xc3, 0xa9, 0xed, 0xa0, 0xef, 0xf0, 0x9f, 0xff, 0x75, 0x61, 0x46, 0x30, 0x31, 0x2d, 0x2b, 0x2e, 0x65, 0x45, 0x74, 0x6e, 0x66]
const edit = byteEdit(EDIT_BYTES)

t.test('validity: the byte form accepts exactly what JSON.parse accepts', async t => {
  const counts = { valid: 0, invalid: 0 }
  const agree = (raw: Buffer): boolean => {
    const expected = parses(raw)
    counts[expected ? 'valid' : 'invalid']++
    if (scans(raw) !== expected) return false
    // The native-search path, where it applies, decides the same.
    const plain = plainText(raw)
    if (plain === null) return !expected
    return plain === undefined || scans(raw, plain) === expected
  }
  fc.assert(fc.property(tree, fc.infiniteStream(fc.nat()), fc.array(edit, { maxLength: 3 }), (v, choices, edits) => {
    const { text } = write(v, () => choices.next().value as number)
    return agree(applyEdits(Buffer.from(text), edits))
  }), { numRuns: 4000 })
  fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), bytes => agree(Buffer.from(bytes))), { numRuns: 1000 })
  fc.assert(fc.property(fc.json({ maxDepth: 4 }), text => agree(Buffer.from(text))), { numRuns: 500 })
  t.ok(counts.valid > 1500 && counts.invalid > 1500, `${counts.valid} valid and ${counts.invalid} invalid texts`)
})

t.test('deep nesting: any depth up to the bound, refused past it', async t => {
  for (const depth of [1, 255, 256, 257, 5000]) {
    for (const [open, close] of [['[', ']'], ['{"a":', '}']] as const) {
      const raw = Buffer.from(`${open.repeat(depth)}0${close.repeat(depth)}`)
      t.equal(valueEnd(raw, 0) !== -1, depth <= 256, `${depth} levels of ${open} against the default bound`)
      t.equal(valueEnd(raw, 0, Infinity), raw.length, `${depth} levels of ${open} without a bound`)
      t.ok(parses(raw), 'JSON.parse reads it too')
    }
  }
  t.equal(valueEnd(Buffer.from('[[1],[[2]]]'), 0, 2), -1, 'a bound of 2 refuses three levels')
  t.equal(valueEnd(Buffer.from('[[1],[2]]'), 0, 2), 9, 'and takes two')
  t.equal(depthProblem(256), 'nesting deeper than 256 levels')
})

t.test('the number grammar as a pattern and as a walk are one grammar', async t => {
  fc.assert(fc.property(fc.stringMatching(/^[-+0-9.eE]{1,8}$/), s => {
    const raw = Buffer.from(s)
    let native = true
    try { JSON.parse(s) } catch { native = false }
    return NUMBER.test(s) === (numberEnd(raw, 0) === raw.length) && NUMBER.test(s) === native
  }), { numRuns: 5000 })
  t.pass('the property held')
})

t.test('kept numbers: long integers always, fractions and exponents when asked', async t => {
  const kept = (s: string, fractions: boolean): boolean => keepsExact(s, 0, numberTokenEnd(s, 0), fractions)
  t.notOk(kept('900719925474099', false), '15 digits are exact as a double')
  t.ok(kept('9007199254740993', false), '16 digits may not be')
  t.ok(kept('-4159988147758116429', false), 'a negative 64-bit id')
  t.notOk(kept('1.0', false), 'a fraction is a plain number by default')
  t.ok(kept('1.0', true), '…and kept as text when asked')
  t.ok(kept('1e400', true), 'an exponent past a double')
  t.notOk(kept('1.2.3', true), 'a token off the grammar is left for JSON.parse to refuse')
  t.notOk(kept('00000000000000001', false), 'a leading zero is off the grammar')
})

t.test('key reading: case, escapes', async t => {
  const raw = Buffer.from('{"Action":1,"requir\\u0065ments":2,"action":3}')
  const word = Buffer.from('action')
  const keys: Array<[number, number, boolean]> = []
  let i = 1
  for (;;) {
    const end = stringEnd(raw, i)
    keys.push([i, end, stringToken.escaped])
    const v = colonValue(raw, end)
    i = skipWs(raw, scalarEnd(raw, v))
    if (raw[i] !== COMMA) break
    i++
  }
  t.equal(keys.length, 3)
  const [a, r, b] = keys as [[number, number, boolean], [number, number, boolean], [number, number, boolean]]
  t.equal(equalsIgnoreAsciiCase(raw, a[0] + 1, a[1] - 1, word), 'case')
  t.equal(equalsIgnoreAsciiCase(raw, b[0] + 1, b[1] - 1, word), 'exact')
  t.equal(equalsIgnoreAsciiCase(raw, r[0] + 1, r[1] - 1, word), 'no')
  t.ok(keyIs(raw, r[0], r[1], r[2], 'requirements', Buffer.from('requirements')), 'an escaped spelling is the same key')
  t.notOk(keyIs(raw, a[0], a[1], a[2], 'action', word), 'another case is another key')
  t.ok(isWs(0x0d) && !isWs(0x0b) && !isWs(0xa0), 'JSON whitespace is four bytes')
})
