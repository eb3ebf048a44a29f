import t from 'tap'
import type { IncomingHttpHeaders } from 'node:http'
import { createBaseCache } from '../../../src/gate/base-cache.js'
import { upstreamTableLoader } from '../../../src/gate/load-base.js'
import { ERRORS } from '../../../src/errors.js'
import { parseUpstreamBody } from '../../../src/json/parse-commit-body.js'
import { stringify } from 'lossless-json'

const BIG = '3055729675574597004'

function metadataJson (columns: number, snapshotId = BIG): string {
  const fields = Array.from({ length: columns }, (_, i) => `{"id":${i + 1},"name":"c${i}","required":false,"type":"long"}`)
  return `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://b/t","last-column-id":${columns},` +
    `"current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[${fields.join(',')}]}],` +
    `"current-snapshot-id":${snapshotId},"refs":{"main":{"snapshot-id":${snapshotId},"type":"branch"}}}`
}

interface Sent { path: string, headers: IncomingHttpHeaders }

/** A fake upstream GET answering like a catalog with ETags, and refusing callers it does not know. */
function fakeUpstream () {
  const sent: Sent[] = []
  const state = { etag: '"v1"', body: metadataJson(3), allowed: new Set(['Bearer alice', 'Bearer bob']) }
  const get = async (path: string, headers: IncomingHttpHeaders) => {
    sent.push({ path, headers })
    if (typeof headers.authorization !== 'string' || !state.allowed.has(headers.authorization)) {
      return { statusCode: 403, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"error":{"message":"Forbidden","type":"ForbiddenException","code":403}}') }
    }
    if (headers['if-none-match'] === state.etag) return { statusCode: 304, headers: { etag: state.etag }, body: Buffer.alloc(0) }
    return { statusCode: 200, headers: { etag: state.etag, 'content-type': 'application/json' }, body: Buffer.from(`{"metadata":${state.body},"config":{"token":"vended"}}`) }
  }
  return { sent, state, get }
}

const table = { namespace: ['db'], name: 't' }

t.test('the ETag cache revalidates on every load, per caller, and reuses the parsed base on 304', async t => {
  const up = fakeUpstream()
  const cache = createBaseCache()
  const load = upstreamTableLoader(up.get, cache)
  const alice = { authorization: 'Bearer alice' }

  const first = await load(table, alice)
  t.equal(first.status, 200)
  t.equal(first.metadata?.refs.main, BIG, 'the 64-bit snapshot id is exact')
  t.notOk('if-none-match' in up.sent[0]!.headers, 'nothing cached yet: a plain GET')
  t.equal(cache.size, 1)

  const second = await load(table, alice)
  t.equal(up.sent.length, 2, 'the upstream is asked again')
  t.equal(up.sent[1]!.headers['if-none-match'], '"v1"')
  t.equal(up.sent[1]!.headers.authorization, 'Bearer alice', 'with the caller\'s own credentials')
  t.equal(second.metadata, first.metadata, 'the parsed form is reused on 304')

  const bob = await load(table, { authorization: 'Bearer bob' })
  t.notOk('if-none-match' in up.sent[2]!.headers, 'another caller has its own entry')
  t.not(bob.metadata, first.metadata)
  t.equal(cache.size, 2)

  up.state.etag = '"v2"'
  up.state.body = metadataJson(4)
  const changed = await load(table, alice)
  t.equal(up.sent[3]!.headers['if-none-match'], '"v1"')
  t.equal(changed.metadata?.lastColumnId, 4, 'a changed table is read afresh')
  t.equal((await load(table, alice)).metadata, changed.metadata, 'and cached under its new ETag')

  up.state.allowed.delete('Bearer alice')
  const refused = await load(table, alice)
  t.equal(refused.status, 403, 'a caller who lost access is refused by the upstream, not answered from the cache')
  t.equal(refused.metadata, undefined)
  t.equal(up.sent[5]!.headers['if-none-match'], '"v2"')
  t.equal(cache.size, 1, 'and the entry is dropped')
  const unknown = await load(table, { authorization: 'Bearer mallory' })
  t.equal(unknown.status, 403)
})

t.test('the ETag cache is bounded by entries and by bytes, least recently used first out', async t => {
  const meta = { formatVersion: 2 as const, lastColumnId: 0, schemas: [], currentSchemaId: 0, partitionSpecs: [], defaultSpecId: 0, sortOrders: [], defaultSortOrderId: 0, properties: {}, refs: {} }
  const byCount = createBaseCache({ maxEntries: 2 })
  byCount.set('a', '"1"', meta, 10)
  byCount.set('b', '"1"', meta, 10)
  t.ok(byCount.get('a'), 'a is now the most recently used')
  byCount.set('c', '"1"', meta, 10)
  t.same([byCount.get('a') !== undefined, byCount.get('b') !== undefined, byCount.get('c') !== undefined], [true, false, true])
  t.equal(byCount.size, 2)

  const byBytes = createBaseCache({ maxBytes: 100 })
  byBytes.set('a', '"1"', meta, 20)
  byBytes.set('b', '"1"', meta, 20)
  byBytes.set('c', '"1"', meta, 20)
  byBytes.set('d', '"1"', meta, 20)
  byBytes.set('e', '"1"', meta, 25)
  t.equal(byBytes.bytes, 85)
  t.equal(byBytes.get('a'), undefined, 'the oldest went first')
  byBytes.set('huge', '"1"', meta, 60)
  t.ok(byBytes.get('huge'), 'a large answer is kept: the table it belongs to is the one in use')
  t.equal(byBytes.size, 2, 'older entries left until the total fits')
  t.equal(byBytes.bytes, 85)
  byBytes.set('giant', '"1"', meta, 500)
  t.ok(byBytes.get('giant'), 'an answer larger than the whole budget is kept alone')
  t.equal(byBytes.size, 1)
  byBytes.set('f', '"1"', meta, 10)
  t.same([byBytes.get('giant'), byBytes.bytes], [undefined, 10], 'and leaves when the next one comes')
})

t.test('upstream answers are parsed natively with only long integers kept exact', async t => {
  const text = `{"a":${BIG},"b":[1,-${BIG},2.5,"${BIG}"],"__proto__":{"x":${BIG}},"n":12}`
  const read = parseUpstreamBody(Buffer.from(text))
  t.ok(read.ok)
  if (!read.ok) return
  const v = read.value as Record<string, unknown>
  t.equal(stringify(v), text, 'every digit survives')
  t.equal(typeof v.n, 'number', 'small numbers are plain numbers')
  t.equal(typeof (v.b as unknown[])[3], 'string', 'strings of digits stay strings')
  t.equal(Object.getPrototypeOf(v), Object.prototype, '__proto__ stays data')
  t.ok(Object.hasOwn(v, '__proto__'))
  const marked = parseUpstreamBody(Buffer.from(`{"s":"\\u0001${BIG}","a":${BIG}}`))
  t.equal(marked.ok && stringify(marked.value), `{"s":"\\u0001${BIG}","a":${BIG}}`, 'a text with the marker escape is read the slow way, same result')
  const deep = parseUpstreamBody(Buffer.from('['.repeat(5000) + ']'.repeat(5000)))
  t.match(deep, { ok: false, message: /nesting deeper than/ })
  t.match(parseUpstreamBody(Buffer.from(`{"a":${BIG}`)), { ok: false, message: /^Cannot read upstream answer: invalid JSON/ })
  t.match(parseUpstreamBody(Buffer.from([0xff, 0xfe])), { ok: false, message: /not valid UTF-8/ })
})

t.test('a base read after a commit parses again only the schemas whose text changed', async t => {
  const { readLoadAnswer } = await import('../../../src/gate/load-base.js')
  const { readBaseText } = await import('../../../src/json/read-base.js')
  const { createSchemaTexts } = await import('../../../src/gate/schema-texts.js')
  const field = (id: number, extra = '') => `{"id":${id},"name":"c${id}","required":false,"type":"long"${extra}}`
  const schema = (id: number, columns: number, extra = '') =>
    `{"type":"struct","schema-id":${id},"fields":[${Array.from({ length: columns }, (_, i) => field(i + 1, i === 0 ? extra : '')).join(',')}]}`
  // v3: a long column's default past 2^53 lives inside a schema text that is reused.
  const answer = (schemas: string[], current: number, tail = '') => Buffer.from('{"metadata-location":"s3://m","metadata":{"format-version":3,' +
    `"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://b/t","last-column-id":9,"current-schema-id":${current},` +
    `"schemas":[${schemas.join(',')}],"current-snapshot-id":${BIG},"refs":{"main":{"snapshot-id":${BIG},"type":"branch"}}${tail}},"config":{"token":"vended"}}`)
  const withDefault = `,"initial-default":${BIG},"write-default":${BIG}`
  const s0 = schema(0, 3, withDefault)
  const s1 = schema(1, 4, withDefault)
  const s2 = schema(2, 5, withDefault)
  const ok = (r: ReturnType<typeof readLoadAnswer>) => {
    if (r.metadata === undefined) throw new Error(r.problem ?? 'no metadata')
    return r.metadata
  }
  const texts = createSchemaTexts()
  const reuse = { texts, key: '/v1/namespaces/db/tables/t?snapshots=refs' }
  const first = ok(readLoadAnswer({ statusCode: 200, headers: {}, body: answer([s0, s1], 1) }, reuse))
  t.equal(texts.size, 1, 'the cold read keeps its schema texts')
  const afterCommit = answer([s0, s1, s2], 2)
  const second = ok(readLoadAnswer({ statusCode: 200, headers: {}, body: afterCommit }, reuse))
  t.equal(second.schemas[0], first.schemas[0], 'an unchanged schema is the same parsed object')
  t.equal(second.schemas[1], first.schemas[1])
  t.same(second, ok(readLoadAnswer({ statusCode: 200, headers: {}, body: afterCommit })), 'the same metadata as a read from scratch')
  t.equal(second.refs.main, BIG, 'the 64-bit snapshot id 3055729675574597004 is exact')
  const defaults = second.schemas.map(s => String(s.struct.fields[0]?.initialDefault))
  t.same(defaults, [BIG, BIG, BIG], 'long defaults stay exact in reused and newly parsed schemas alike')

  // remove-schemas: the indexes shift, the texts are still found.
  const shifted = ok(readLoadAnswer({ statusCode: 200, headers: {}, body: answer([s1, s2], 2) }, reuse))
  t.equal(shifted.schemas[0], first.schemas[1], 'found at another index')
  t.equal(shifted.schemas[1], second.schemas[2])
  // A schema whose text changed in any way (a doc here) is parsed again.
  const edited = schema(1, 4, `${withDefault},"doc":"now documented"`)
  const changed = ok(readLoadAnswer({ statusCode: 200, headers: {}, body: answer([edited, s2], 2) }, reuse))
  t.not(changed.schemas[0], first.schemas[1])
  t.equal(changed.schemas[0]?.struct.fields[0]?.doc, 'now documented')

  // Readings where nothing may be reused, compared with a read from scratch.
  const same = (label: string, body: Buffer) => {
    // Primed with every schema of `afterCommit`, so that a wrong reuse would show.
    ok(readLoadAnswer({ statusCode: 200, headers: {}, body: afterCommit }, reuse))
    const scratch = readLoadAnswer({ statusCode: 200, headers: {}, body })
    t.same(readLoadAnswer({ statusCode: 200, headers: {}, body }, reuse), scratch, label)
  }
  const s2other = schema(2, 2)
  same('a second "schemas" key (JSON.parse keeps the last): nothing reused', Buffer.from(afterCommit.toString().replace('"current-snapshot-id"', `"schemas":[${s0},${s1},${s2other}],"current-snapshot-id"`)))
  same('a later key spelled with an escape (the one JSON.parse keeps)', Buffer.from(afterCommit.toString().replace('"current-snapshot-id"', `"schem\\u0061s":[${s2other}],"current-snapshot-id"`)))
  same('a second "metadata" key', Buffer.from(afterCommit.toString().replace(',"config":', `,"metadata":${JSON.stringify({ 'format-version': 9 })},"config":`)))
  same('the marker escape in the text: the slow reader', Buffer.from(afterCommit.toString().replace('"s3://b/t"', '"s3://b/\\u0001t"')))
  t.match(readLoadAnswer({ statusCode: 200, headers: {}, body: Buffer.from(afterCommit.toString().replace('"s3://m"', '"s3://m" x')) }, reuse),
    { status: 200, problem: /^Cannot read upstream answer: invalid JSON/ }, 'a text that is not JSON elsewhere is refused with the parser\'s message')

  // The depth bound counts the nesting inside a reused text.
  const allKnown = answer([edited, s2], 2)
  ok(readLoadAnswer({ statusCode: 200, headers: {}, body: allKnown }, reuse))
  const known = texts.get(reuse.key)
  t.ok(known)
  if (known !== undefined) {
    t.same(known.depths, [3, 3], 'each text knows its nesting: schema, fields, field')
    // Every schema of this answer is known: only the reuse check can see its depth (3 + 3 levels).
    t.match(readBaseText(allKnown, known, 5), { ok: false, message: /nesting deeper than 5 levels/ }, 'a reused text does not escape the depth bound')
    const fits = readBaseText(allKnown, known, 6)
    t.ok(fits.ok && fits.reused.size === 2, 'within the bound both are reused')
  }
})

t.test('schema texts are bounded by tables and by characters, least recently used first out', async t => {
  const { createSchemaTexts } = await import('../../../src/gate/schema-texts.js')
  const schema = { identifierFieldIds: [], struct: { kind: 'struct' as const, fields: [] } }
  const known = (chars: number) => ({ texts: ['x'.repeat(chars)], schemas: [schema], depths: [1] })
  const byCount = createSchemaTexts({ maxEntries: 2 })
  byCount.set('a', known(10))
  byCount.set('b', known(10))
  t.ok(byCount.get('a'))
  byCount.set('c', known(10))
  t.same([byCount.get('a') !== undefined, byCount.get('b') !== undefined, byCount.get('c') !== undefined], [true, false, true])
  const byChars = createSchemaTexts({ maxChars: 100 })
  for (const k of ['a', 'b', 'c', 'd']) byChars.set(k, known(20))
  byChars.set('e', known(25))
  t.equal(byChars.chars, 85, 'counted by the characters of the texts kept')
  t.equal(byChars.get('a'), undefined, 'the oldest went first')
  byChars.set('huge', known(60))
  t.ok(byChars.get('huge'), 'a table with many schema texts is kept: no size at which reuse stops')
  t.equal(byChars.chars, 85, 'the oldest tables left for it')
  byChars.set('b', { texts: [], schemas: [], depths: [] })
  t.equal(byChars.get('b'), undefined, 'a read without schema texts replaces the entry with nothing')
})

t.test('a field repeating the one before it in the schema history is read once, with the same result', async t => {
  const { default: fc } = await import('fast-check')
  const { readBaseText } = await import('../../../src/json/read-base.js')
  const { readLoadAnswer } = await import('../../../src/gate/load-base.js')
  const { createSchemaTexts } = await import('../../../src/gate/schema-texts.js')

  // Field texts as an upstream writes them: long defaults as bare digits, docs with escapes,
  // nested structs, and now and then a space the next schema's copy does not have.
  const fieldText = fc.record({
    name: fc.constantFrom('id', 'n', 'note', 'a\\"b', '\\u00e9t\\u00e9', 'x.y'),
    type: fc.constantFrom('"long"', '"string"', '{"type":"struct","fields":[{"id":900,"name":"inner","required":false,"type":"int"}]}',
      '{"type":"list","element-id":901,"element":{"type":"struct","fields":[{"id":902,"name":"deep","required":false,"type":"long"}]},"element-required":false}'),
    big: fc.boolean(),
    doc: fc.option(fc.constantFrom('plain', 'with \\"quotes\\" and \\\\ slashes', 'line\\nbreak'), { nil: undefined }),
    space: fc.boolean()
  })
  const render = (id: number, f: { name: string, type: string, big: boolean, doc?: string, space: boolean }): string =>
    `{"id":${id},${f.space ? ' ' : ''}"name":"${f.name}${id}","required":false,"type":${f.type}` +
    `${f.big ? `,"initial-default":${BIG}` : ''}${f.doc === undefined ? '' : `,"doc":"${f.doc}"`}}`
  // A history: each schema keeps the fields before it, some edited, and may add one.
  const history = fc.tuple(fc.array(fieldText, { minLength: 1, maxLength: 6 }), fc.array(fc.tuple(fc.nat(8), fieldText, fc.boolean()), { maxLength: 6 }))
    .map(([first, steps]) => {
      const schemas: string[][] = [first.map((f, i) => render(i + 1, f))]
      for (const [at, f, add] of steps) {
        const prev = [...(schemas.at(-1) as string[])]
        if (add) prev.push(render(prev.length + 1, f))
        else prev[at % prev.length] = render((at % prev.length) + 1, f)
        schemas.push(prev)
      }
      return schemas.map((fields, k) => `{"type":"struct","schema-id":${k},"fields":[${fields.join(',')}]}`)
    })
  const answer = (schemas: string[]): Buffer => Buffer.from('{"metadata-location":"s3://m","metadata":{"format-version":3,' +
    `"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://b/t","last-column-id":999,"current-schema-id":${schemas.length - 1},` +
    `"schemas":[${schemas.join(',')}],"current-snapshot-id":${BIG},"refs":{"main":{"snapshot-id":${BIG},"type":"branch"}}},"config":{}}`)

  /** Deepest nesting of a JSON text (brackets outside strings). */
  const nesting = (text: string): number => {
    let depth = 0
    let max = 0
    for (let i = 0; i < text.length; i++) {
      const c = text[i]
      if (c === '"') {
        i++
        while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
      } else if (c === '{' || c === '[') {
        max = Math.max(max, ++depth)
      } else if (c === '}' || c === ']') {
        depth--
      }
    }
    return max
  }
  let jumped = 0
  fc.assert(fc.property(history, fc.integer({ min: 4, max: 12 }), (schemas, maxDepth) => {
    const raw = answer(schemas)
    // The plain reader (every byte scanned and parsed) is the oracle: same tree, same depth verdict.
    const plain = parseUpstreamBody(raw, maxDepth)
    const read = readBaseText(raw, undefined, maxDepth)
    if (!plain.ok) return !read.ok && read.message === plain.message
    if (!read.ok) return false
    t.same(read.value, plain.value)
    const schemasOf = (v: unknown): Array<{ fields: unknown[] }> => (v as { metadata: { schemas: Array<{ fields: unknown[] }> } }).metadata.schemas
    for (let k = 1; k < schemas.length; k++) {
      schemasOf(read.value)[k]?.fields.forEach((f, j) => { if (f === schemasOf(read.value)[k - 1]?.fields[j]) jumped++ })
    }
    // And through the model, with and without the texts of an earlier read.
    const scratch = readLoadAnswer({ statusCode: 200, headers: {}, body: raw })
    if (scratch.metadata !== undefined) {
      // The texts kept for the next read know their nesting, jumped fields included.
      const kept = createSchemaTexts()
      readLoadAnswer({ statusCode: 200, headers: {}, body: raw }, { texts: kept, key: 't' })
      t.same(kept.get('t')?.depths, schemas.map(nesting))
    }
    const texts = createSchemaTexts()
    const reuse = { texts, key: 't' }
    readLoadAnswer({ statusCode: 200, headers: {}, body: answer(schemas.slice(0, -1).length > 0 ? schemas.slice(0, -1) : schemas) }, reuse)
    t.same(readLoadAnswer({ statusCode: 200, headers: {}, body: raw }, reuse), scratch)
    return true
  }), { numRuns: 300 })
  t.ok(jumped > 0, `repeated fields were jumped over (${jumped} in all)`)

  // A schema whose `fields` the scan cannot tell apart from another key: read as the plain reader reads it.
  const f1 = '{"id":1,"name":"a","required":false,"type":"long"}'
  const f2 = '{"id":2,"name":"b","required":false,"type":"long"}'
  for (const [label, second] of [
    ['a second "fields" key (JSON.parse keeps the last)', `{"type":"struct","schema-id":1,"fields":[${f1}],"fields":[${f2}]}`],
    ['a "fields" key spelled with an escape', `{"type":"struct","schema-id":1,"fields":[${f1}],"fi\\u0065lds":[${f2}]}`]
  ] as const) {
    const raw = answer([`{"type":"struct","schema-id":0,"fields":[${f1}]}`, second])
    const plain = parseUpstreamBody(raw)
    const read = readBaseText(raw)
    t.ok(plain.ok && read.ok, label)
    if (plain.ok && read.ok) t.same(read.value, plain.value, label)
  }

  // The benchmark's shape: 20 schemas, each the last plus a column; long ids stay exact.
  const cols = (n: number) => Array.from({ length: n }, (_, i) => `{"id":${i + 1},"name":"c${i + 1}","required":false,"type":"long","write-default":${BIG}}`)
  const twenty = Array.from({ length: 20 }, (_, k) => `{"type":"struct","schema-id":${k},"fields":[${cols(k + 3).join(',')}]}`)
  const read = readLoadAnswer({ statusCode: 200, headers: {}, body: answer(twenty) })
  t.equal(read.metadata?.schemas.length, 20)
  t.same(read.metadata?.schemas.map(s => String(s.struct.fields[0]?.writeDefault)), Array(20).fill(BIG), 'a long default in a repeated field is exact in every schema')
  t.equal(read.metadata?.refs.main, BIG, 'the 64-bit snapshot id 3055729675574597004 is exact')
})

t.test('a base the loader refuses itself is a catalogue answer, and nothing is sent', async t => {
  const up = fakeUpstream()
  const dots = await upstreamTableLoader(up.get, createBaseCache())({ namespace: ['db'], name: '..' }, { authorization: 'Bearer alice' })
  t.equal(dots.status, ERRORS.BAD_REQUEST.status)
  t.match(JSON.parse(dots.rawStatusBody?.toString() ?? '{}'), { error: { type: ERRORS.BAD_REQUEST.type, code: ERRORS.BAD_REQUEST.status, message: /Cannot load table db\.\.\.: "\.\." is not usable/ } })
  t.equal(up.sent.length, 0, 'a dot-segment name never reaches the upstream')

  const tooLarge = await upstreamTableLoader(async () => { throw Object.assign(new Error('answer over 64 KiB'), { code: 'ICEGUARD_RESPONSE_TOO_LARGE' }) })(table, {})
  t.equal(tooLarge.status, ERRORS.BASE_TOO_LARGE.status)
  t.match(JSON.parse(tooLarge.rawStatusBody?.toString() ?? '{}'), { error: { type: ERRORS.BASE_TOO_LARGE.type, code: 400, message: /Cannot judge a commit to table db\.t: .*answer over 64 KiB.*--upstream-max-response/ } })
})
