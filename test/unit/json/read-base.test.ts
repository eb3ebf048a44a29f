/**
 * The loadTable reader (src/json/read-base.ts) against the plain upstream reader it speeds up
 * (`parseUpstreamBody`): on generated answers, and on random edits of them, both accept and refuse
 * the same texts and build the same tree (64-bit integers kept exact); fields that repeat the
 * schema before them are filled in with equal values; and a second read with the first read's
 * schema texts reuses every schema it may, standing a placeholder in for each.
 */
import fc from 'fast-check'
import t from 'tap'
import { applyEdits, byteEdit } from '../../helpers/byte-edits.js'
import { isDeepStrictEqual } from 'node:util'
import { LosslessNumber } from 'lossless-json'
import { readBaseText, type KnownSchemas } from '../../../src/json/read-base.js'
import { parseUpstreamBody } from '../../../src/json/parse-commit-body.js'
import type { Schema } from '../../../src/iceberg/types.js'

const BIG = '4159988147758116429'

/** Fields from a small pool, so that schemas repeat each other's fields at the same positions. */
const field = fc.constantFrom(
  '{"id":1,"name":"id","required":true,"type":"long"}',
  '{"id":2,"name":"data","required":false,"type":"string"}',
  `{"id":3,"name":"n","required":false,"type":"long","initial-default":${BIG}}`,
  '{"id":4,"name":"s","required":false,"type":{"type":"struct","fields":[{"id":5,"name":"x","required":false,"type":"int"}]}}',
  '{"id":6,"name":"na\\u00efve","required":false,"type":"double","doc":"say \\"hi\\""}',
  '{ "id" : 7, "name" : "spaced", "required" : false, "type" : "date" }'
)
const schema = fc.tuple(fc.nat(30), fc.array(field, { minLength: 1, maxLength: 5 }))
  .map(([id, fields]) => `{"type":"struct","schema-id":${id},"fields":[${fields.join(',')}]}`)
const answer = fc.tuple(fc.array(schema, { maxLength: 5 }), fc.constantFrom('', ' ', '\n  '))
  .map(([schemas, ws]) => `{${ws}"metadata-location":"s3://m",${ws}"metadata":{"format-version":2,"table-uuid":"u",${ws}"schemas":[${schemas.join(`,${ws}`)}],"current-snapshot-id":${BIG},"snapshots":[{"snapshot-id":-${BIG},"summary":{"operation":"append"}}]},"config":{"k":"v"}}`)

/** Bytes a random edit may put in: structure, escapes, digits, quotes. */
const EDIT_BYTES = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x30, 0x39, 0x2d, 0x2e, 0x65, 0x75, 0x00, 0xc3]
const edit = byteEdit(EDIT_BYTES)

/** Schemas as the model would parse them: only identity matters to the reader (it keeps and hands them back). */
function fakeSchemas (count: number): Schema[] {
  return Array.from({ length: count }, (_, k) => ({ 'schema-id': k }) as unknown as Schema)
}

function schemasOf (value: unknown): unknown[] {
  return ((value as { metadata: { schemas: unknown[] } }).metadata.schemas)
}

t.test('reads what the plain upstream reader reads, into the same tree', async t => {
  const counts = { ok: 0, refused: 0 }
  fc.assert(fc.property(answer, fc.array(edit, { maxLength: 2 }), (text, edits) => {
    const raw = applyEdits(text, edits)
    const plain = parseUpstreamBody(raw)
    const read = readBaseText(raw)
    counts[plain.ok ? 'ok' : 'refused']++
    if (!plain.ok || !read.ok) return plain.ok === read.ok && (plain.ok || read.ok || plain.message === read.message)
    return read.reused.size === 0 && isDeepStrictEqual(read.value, plain.value)
  }), { numRuns: 1500 })
  t.ok(counts.ok > 300 && counts.refused > 300, `${counts.ok} answers read, ${counts.refused} refused`)
})

t.test('long integers are kept exact; repeated fields are the very object parsed before', async t => {
  const s0 = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long","initial-default":${BIG}}]}`
  const s1 = s0.replace('"schema-id":0', '"schema-id":1')
  const read = readBaseText(Buffer.from(`{"metadata":{"schemas":[${s0},${s1}],"current-snapshot-id":${BIG}}}`))
  t.ok(read.ok)
  if (!read.ok) return
  const meta = (read.value as { metadata: { schemas: Array<{ fields: unknown[] }>, 'current-snapshot-id': unknown } }).metadata
  t.same(meta['current-snapshot-id'], new LosslessNumber(BIG), 'a 64-bit id as its text')
  t.equal(meta.schemas[1]?.fields[0], meta.schemas[0]?.fields[0], 'the second schema\'s field is the first one\'s object')
  t.same((meta.schemas[0]?.fields[0] as { 'initial-default': unknown })['initial-default'], new LosslessNumber(BIG))
})

t.test('a second read reuses the texts of the first', async t => {
  fc.assert(fc.property(answer, text => {
    const raw = Buffer.from(text)
    const first = readBaseText(raw)
    if (!first.ok) return false
    const count = schemasOf(first.value).length
    const schemas = fakeSchemas(count)
    const known: KnownSchemas | undefined = first.collect(schemas)
    if (known === undefined || known.texts.length !== count) return false
    const second = readBaseText(raw, known)
    if (!second.ok || second.reused.size !== count) return false
    // Each reused schema is the one kept for it, and its place in the tree holds the placeholder.
    for (let k = 0; k < count; k++) {
      if (second.reused.get(k) === undefined || schemasOf(second.value)[k] !== 0) return false
    }
    // Everything around the schemas is read as before.
    const strip = (v: unknown): unknown => ({ ...(v as object), metadata: { ...(v as { metadata: object }).metadata, schemas: [] } })
    return isDeepStrictEqual(strip(second.value), strip(first.value))
  }), { numRuns: 500 })
  t.pass('the property held')
})

t.test('refusals', async t => {
  const message = (raw: Buffer): string | undefined => {
    const read = readBaseText(raw)
    return read.ok ? undefined : read.message
  }
  t.equal(message(Buffer.from([0x7b, 0xff, 0x7d])), 'Cannot read upstream answer: it is not valid UTF-8')
  t.equal(message(Buffer.from(`{"a":${'['.repeat(1025)}${']'.repeat(1025)}}`)), 'Cannot read upstream answer: nesting deeper than 1024 levels')
  t.equal(message(Buffer.from(`{"a":${'['.repeat(1023)}${']'.repeat(1023)}}`)), undefined, '1024 levels are read')
  t.match(message(Buffer.from('{"metadata":{"schemas":[}}')), /^Cannot read upstream answer: invalid JSON: /)
})
