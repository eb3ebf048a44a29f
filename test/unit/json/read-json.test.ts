/**
 * The request-body reader's key checks against a plain reference: a recursive reader of the
 * parsed tree's source text that lists every object's keys by decoding each one on its own. The
 * fast scan hashes keys and compares their text in place; on any valid JSON text both must refuse
 * the same duplicate and prototype keys with the same message, and accept the rest.
 */
import fc from 'fast-check'
import t from 'tap'
import { parseCommitBody, parseUpstreamBody } from '../../../src/json/parse-commit-body.js'
import { readBaseText } from '../../../src/json/read-base.js'

/** The first key problem of a valid JSON text, in document order, as the reader words it. */
function referenceProblem (text: string): string | undefined {
  let i = 0
  const ws = (): void => { while (/\s/.test(text[i] ?? '')) i++ }
  const str = (): string => {
    const start = i
    i++
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return JSON.parse(text.slice(start, i)) as string
  }
  const value = (under: string | undefined): string | undefined => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      const seen = new Set<string>()
      ws()
      if (text[i] === '}') { i++; return undefined }
      for (;;) {
        ws()
        const key = str()
        if (key === '__proto__') return 'the key "__proto__" is not allowed'
        if (key === 'prototype' && under === 'constructor') return 'the key "constructor.prototype" is not allowed'
        if (seen.has(key)) return `duplicate key "${key.length > 64 ? `${key.slice(0, 64)}…` : key}" in one object`
        seen.add(key)
        ws()
        i++ // :
        const p = value(key)
        if (p !== undefined) return p
        ws()
        if (text[i++] === '}') return undefined
      }
    }
    if (c === '[') {
      i++
      ws()
      if (text[i] === ']') { i++; return undefined }
      for (;;) {
        const p = value(undefined)
        if (p !== undefined) return p
        ws()
        if (text[i++] === ']') return undefined
      }
    }
    if (c === '"') { str(); return undefined }
    while (i < text.length && !/[\s,\]}]/.test(text[i] as string)) i++
    return undefined
  }
  return value(undefined)
}

/** Keys that collide, escape, or are prototype names; spelled plainly or with `\u` escapes. */
const KEYS = ['a', 'k', 'id', 'name', 'type', 'doc', '__proto__', 'constructor', 'prototype', 'é', 'ключ', 'a"b', 'x'.repeat(70)]
const keyText = fc.tuple(fc.constantFrom(...KEYS), fc.boolean()).map(([k, escape]) => {
  const plain = JSON.stringify(k)
  return escape ? plain.replace(/[a-z_]/, c => `\\u00${c.charCodeAt(0).toString(16)}`) : plain
})

const { json } = fc.letrec<{ json: string, object: string, array: string }>(tie => ({
  json: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constantFrom('1', '"v"', 'null', '12345678901234567890', '1.5'), tie('object'), tie('array')),
  // Up to 20 members: past 16 keys an object's keys are kept in a Set, not a list.
  object: fc.array(fc.tuple(keyText, tie('json')), { maxLength: 20 }).map(members => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`),
  array: fc.array(tie('json'), { maxLength: 3 }).map(items => `[${items.join(', ')}]`)
}))

t.test('parseCommitBody refuses exactly the key problems the reference finds, with the same message', async t => {
  fc.assert(fc.property(json, text => {
    const expected = referenceProblem(text)
    const r = parseCommitBody(Buffer.from(text))
    if (expected === undefined) return r.ok
    return !r.ok && r.message === `Cannot read request body: ${expected}`
  }), { numRuns: 2000 })
  t.pass('the property held')
})

t.test('keys compared in place: same length, same hash bucket, different text', async t => {
  t.ok(parseCommitBody(Buffer.from('{"ab":1,"ba":1,"a\\u0062":{"ab":2}}')).ok === false, 'an escaped spelling equals the plain one')
  t.ok(parseCommitBody(Buffer.from('{"Aa":1,"BB":1}')).ok, '"Aa" and "BB" share a 31-based hash but are different keys')
  const many = Array.from({ length: 40 }, (_, k) => `"k${k}":${k}`)
  t.ok(parseCommitBody(Buffer.from(`{${many.join(',')}}`)).ok, 'forty distinct keys')
  const r = parseCommitBody(Buffer.from(`{${many.join(',')},"k7":0}`))
  t.notOk(r.ok)
  if (!r.ok) t.equal(r.message, 'Cannot read request body: duplicate key "k7" in one object', 'a duplicate past the linear search is found')
  t.ok(parseCommitBody(Buffer.from('{"a":{"k":1},"k":{"a":1}}')).ok, 'a child\'s keys leave with it')
  t.notOk(parseCommitBody(Buffer.from('{"a":{"k":1},"b":[{"c":1}],"a":1}')).ok, 'the parent\'s keys stay through its children')
})

t.test('a number where a key must be is refused, though its text is kept as a marked string', async t => {
  for (const text of ['{"a":1,12345678901234567890:1}', '{1.5:1}', '{"a":{-4159988147758116429:[]}}']) {
    const r = parseCommitBody(Buffer.from(text))
    t.notOk(r.ok, text)
    if (!r.ok) t.match(r.message, /^Cannot read request body: invalid JSON: /)
  }
  const upstream = parseUpstreamBody(Buffer.from('{"x":[1],12345678901234567890:1}'))
  t.notOk(upstream.ok, 'an upstream answer too')
  const base = readBaseText(Buffer.from('{"metadata":{"schemas":[],12345678901234567890:1}}'))
  t.notOk(base.ok, 'and a loadTable answer')
  // A repeated key drops a kept number from the tree: valid JSON, read as JSON.parse reads it.
  const repeated = parseUpstreamBody(Buffer.from('{"id":12345678901234567890,"id":7}'))
  t.same(repeated, { ok: true, value: { id: 7 } }, 'a repeated key in an answer keeps the last value')
})
