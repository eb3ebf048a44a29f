/**
 * The embedded catalog and the gate give the same answer for the same schema.
 *
 * The gate reads schemas with the one Iceberg model (src/iceberg: type grammar per spec Appendix C,
 * decimal bounds, single-value defaults per Appendix D). Each case below is sent twice: to the
 * embedded catalog directly (no proxy in between), as a createTable and as an add-schema commit,
 * and to the gate's pure evaluation. Both must accept it, or both refuse it with a 400.
 * The catalog builds metadata with the same model (src/iceberg/metadata-builder.ts), so every case
 * must agree.
 */
import t from 'tap'
import { request } from 'undici'
import { evaluateCommit, evaluateCreate } from '../../src/engine/evaluate-commit.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import { SPEC_ONLY_SETTINGS } from '../../src/engine/rules/settings.js'
import { startCatalog } from '../helpers/index.js'

/** The rules a well-formed catalog enforces too: the request's shape, defaults, format-version types. */
const WELL_FORMED = new Set(['REQUEST_WELL_FORMED', 'DEFAULT_VALUE_VALID', 'FORMAT_VERSION_TYPES'])

interface Case {
  readonly name: string
  /** The new field (id 3) as JSON. */
  readonly field: Record<string, unknown>
  readonly formatVersion: 2 | 3
  /** Whether both must accept it. */
  readonly accepted: boolean
}

const field = (type: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id: 3, name: 'v', required: false, type, ...extra })

const CASES: readonly Case[] = [
  { name: 'decimal(10, 2)', field: field('decimal(10, 2)'), formatVersion: 2, accepted: true },
  { name: 'decimal(10,2), no space', field: field('decimal(10,2)'), formatVersion: 2, accepted: true },
  { name: 'DECIMAL(10,2), upper case (Java lower-cases)', field: field('DECIMAL(10,2)'), formatVersion: 2, accepted: true },
  { name: 'decimal( 10 , 2 ): whitespace inside (Appendix C)', field: field('decimal( 10 , 2 )'), formatVersion: 2, accepted: true },
  { name: 'decimal (10,2): whitespace before the bracket', field: field('decimal (10,2)'), formatVersion: 2, accepted: false },
  { name: 'decimal(5,9): scale above precision', field: field('decimal(5,9)'), formatVersion: 2, accepted: false },
  { name: 'decimal(11, 20): scale above precision', field: field('decimal(11, 20)'), formatVersion: 2, accepted: false },
  { name: 'decimal(38, 38)', field: field('decimal(38, 38)'), formatVersion: 2, accepted: true },
  { name: 'decimal(39, 2): precision above 38', field: field('decimal(39, 2)'), formatVersion: 2, accepted: false },
  { name: 'decimal(0, 0): precision 0', field: field('decimal(0, 0)'), formatVersion: 2, accepted: false },
  { name: 'fixed[16]', field: field('fixed[16]'), formatVersion: 2, accepted: true },
  { name: 'fixed[ 16 ]: whitespace inside', field: field('fixed[ 16 ]'), formatVersion: 2, accepted: true },
  { name: 'fixed [16]: whitespace before the bracket', field: field('fixed [16]'), formatVersion: 2, accepted: false },
  { name: 'fixed[0] (Java, iceberg-go and iceberg-rust read it)', field: field('fixed[0]'), formatVersion: 2, accepted: true },
  { name: '" long ": padded type name', field: field(' long '), formatVersion: 2, accepted: false },
  { name: 'strnig: no such type', field: field('strnig'), formatVersion: 2, accepted: false },
  { name: 'timestamp_ns on v2', field: field('timestamp_ns'), formatVersion: 2, accepted: false },
  { name: 'timestamp_ns on v3', field: field('timestamp_ns'), formatVersion: 3, accepted: true },
  { name: 'write-default on v2', field: field('string', { 'write-default': 'n/a' }), formatVersion: 2, accepted: true },
  { name: 'initial-default on v2', field: field('string', { 'initial-default': 'n/a', 'write-default': 'n/a' }), formatVersion: 2, accepted: false },
  { name: 'date default "2024-02-29"', field: field('date', { 'initial-default': '2024-02-29', 'write-default': '2024-02-29' }), formatVersion: 3, accepted: true },
  { name: 'date default "not-a-date"', field: field('date', { 'write-default': 'not-a-date' }), formatVersion: 3, accepted: false },
  { name: 'decimal(18, 2) default "1.234": wrong scale', field: field('decimal(18, 2)', { 'write-default': '1.234' }), formatVersion: 3, accepted: false },
  { name: 'int default "ten"', field: field('int', { 'initial-default': 'ten', 'write-default': 'ten' }), formatVersion: 3, accepted: false },
  { name: 'null defaults: no default', field: field('int', { 'initial-default': null, 'write-default': null }), formatVersion: 2, accepted: true }
]

const baseFields = [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'name', required: false, type: 'string' }]
const schema = (fields: unknown[]): Record<string, unknown> => ({ type: 'struct', 'schema-id': 0, 'identifier-field-ids': [1], fields })

/** The gate's verdict: accepted unless a well-formedness rule (one a catalog enforces too) fires. */
function gateAccepts (c: Case): { create: boolean, commit: boolean, why: string } {
  const create = evaluateCreate({ request: { name: 't', schema: schema([...baseFields, c.field]), properties: { 'format-version': String(c.formatVersion) } }, settings: SPEC_ONLY_SETTINGS })
  const { metadata: base } = parseTableMetadata({
    'format-version': c.formatVersion,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: 's3://w/t',
    'last-column-id': 2,
    'current-schema-id': 0,
    schemas: [schema(baseFields)]
  })
  const commit = evaluateCommit({ base, request: { updates: [{ action: 'add-schema', schema: schema([...baseFields, c.field]) }, { action: 'set-current-schema', 'schema-id': -1 }] }, settings: SPEC_ONLY_SETTINGS })
  const errors = (e: typeof create): string[] => e.findings.filter(f => f.severity === 'error' && WELL_FORMED.has(f.rule)).map(f => `${f.rule}: ${f.message}`)
  return { create: errors(create).length === 0, commit: errors(commit).length === 0, why: [...errors(create), ...errors(commit)].join('; ') }
}

t.test('the gate and the embedded catalog agree on each schema', async t => {
  const catalog = await startCatalog(t)
  const call = async (method: 'POST', path: string, body: unknown): Promise<{ status: number, text: string }> => {
    const res = await request(`${catalog.url}${path}`, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    return { status: res.statusCode, text: await res.body.text() }
  }
  t.equal((await call('POST', '/v1/namespaces', { namespace: ['db'] })).status, 200)

  for (const [i, c] of CASES.entries()) {
    await t.test(c.name, async t => {
      const gate = gateAccepts(c)
      t.equal(gate.create, c.accepted, `the gate ${c.accepted ? 'accepts' : 'refuses'} it in a create ${gate.why}`)
      t.equal(gate.commit, c.accepted, `the gate ${c.accepted ? 'accepts' : 'refuses'} it in a commit ${gate.why}`)

      const created = await call('POST', '/v1/namespaces/db/tables', { name: `c${i}`, schema: schema([...baseFields, c.field]), properties: { 'format-version': String(c.formatVersion) } })
      t.equal(created.status, c.accepted ? 200 : 400, `the catalog ${c.accepted ? 'accepts' : 'refuses'} it in a create: ${created.text.slice(0, 200)}`)

      const table = `e${i}`
      const setup = await call('POST', '/v1/namespaces/db/tables', { name: table, schema: schema(baseFields), properties: { 'format-version': String(c.formatVersion) } })
      t.equal(setup.status, 200, 'the table to evolve')
      const committed = await call('POST', `/v1/namespaces/db/tables/${table}`, {
        requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
        updates: [{ action: 'add-schema', schema: { ...schema([...baseFields, c.field]), 'schema-id': 1 } }, { action: 'set-current-schema', 'schema-id': -1 }]
      })
      t.equal(committed.status, c.accepted ? 200 : 400, `the catalog ${c.accepted ? 'accepts' : 'refuses'} it in a commit: ${committed.text.slice(0, 200)}`)
    })
  }
})
