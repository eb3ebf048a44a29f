import t from 'tap'
import type { IncomingHttpHeaders } from 'node:http'
import { createBaseCache } from '../src/gate/base-cache.js'
import { upstreamTableLoader } from '../src/gate/load-base.js'
import { parseUpstreamBody } from '../src/gate/parse-commit-body.js'
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
  t.equal(byBytes.get('huge'), undefined, 'an answer over a quarter of the budget is not kept')
  t.equal(byBytes.size, 4)
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
