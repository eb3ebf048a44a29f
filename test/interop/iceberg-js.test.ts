/**
 * iceberg-js (the npm client, run for real) through iceguard, against the real Iceberg REST fixture
 * and against iceguard's embedded catalog, the same flow on both: create a namespace and a table,
 * load it, widen a column, add one, have a narrowing and a policy-forbidden drop refused, commit on a
 * stale base, drop the table. Each catalog must answer the flow the same way (status, error type,
 * the resulting schema, ignoring uuids, timestamps and locations). Runs on every transport.
 */
import t, { type Test } from 'tap'
import { IcebergError, IcebergRestCatalog, type TableMetadata } from 'iceberg-js'
import { startCatalog } from '../helpers/catalog.js'
import { startProxy } from '../helpers/proxy.js'
import { onEveryTransport } from '../helpers/transports.js'
import { startFixture, type RunningFixture } from './helpers/fixture.js'
import { guardedPolicy } from './helpers/guarded.js'
import { needToolchain, toolchainSkip } from './helpers/toolchain.js'

const parts = ['java', 'fixture'] as const

interface Outcome {
  readonly step: string
  readonly ok: boolean
  readonly status?: number
  readonly type?: string
  readonly message?: string
  readonly fields?: Array<[number, string, unknown, boolean]>
}

function current (meta: TableMetadata): Array<[number, string, unknown, boolean]> {
  const schema = meta.schemas?.find(s => s['schema-id'] === meta['current-schema-id'])
  return (schema?.fields ?? []).map(f => [f.id, f.name, f.type, f.required])
}

const field = (id: number, name: string, type: string, required = false): { id: number, name: string, type: string, required: boolean } => ({ id, name, type, required })

/** The flow, in namespace `ns`; every step's outcome in order. */
async function flow (ice: IcebergRestCatalog, ns: string): Promise<Outcome[]> {
  const out: Outcome[] = []
  const id = { namespace: [ns], name: 'orders' }
  const step = async (name: string, fn: () => Promise<TableMetadata | undefined>): Promise<void> => {
    try {
      const meta = await fn()
      out.push({ step: name, ok: true, ...(meta !== undefined && { fields: current(meta) }) })
    } catch (err) {
      if (!(err instanceof IcebergError)) throw err
      out.push({ step: name, ok: false, status: err.status, type: err.icebergType, message: err.message })
    }
  }
  const commit = (schemaId: number, fields: ReturnType<typeof field>[], lastColumnId: number) => async () => {
    await ice.updateTable(id, {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': schemaId }],
      updates: [
        { action: 'add-schema', schema: { type: 'struct', 'schema-id': schemaId + 1, fields }, 'last-column-id': lastColumnId },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
    } as Parameters<IcebergRestCatalog['updateTable']>[1])
    return await ice.loadTable(id)
  }
  await step('create namespace', async () => { await ice.createNamespace({ namespace: [ns] }); return undefined })
  await step('create table', async () => await ice.createTable({ namespace: [ns] }, { name: 'orders', schema: { type: 'struct', fields: [field(1, 'id', 'long', true), field(2, 'qty', 'int'), field(3, 'note', 'string')] } as never }))
  await step('load table', async () => await ice.loadTable(id))
  await step('widen qty to long', commit(0, [field(1, 'id', 'long', true), field(2, 'qty', 'long'), field(3, 'note', 'string')], 3))
  await step('add column', commit(1, [field(1, 'id', 'long', true), field(2, 'qty', 'long'), field(3, 'note', 'string'), field(4, 'tag', 'string')], 4))
  await step('narrow qty to int', commit(2, [field(1, 'id', 'long', true), field(2, 'qty', 'int'), field(3, 'note', 'string'), field(4, 'tag', 'string')], 4))
  await step('drop note', commit(2, [field(1, 'id', 'long', true), field(2, 'qty', 'long'), field(4, 'tag', 'string')], 4))
  await step('stale base', async () => {
    await ice.updateTable(id, { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }], updates: [{ action: 'set-properties', updates: { owner: 'x' } }] } as never)
    return undefined
  })
  await step('load after', async () => await ice.loadTable(id))
  await step('drop table', async () => { await ice.dropTable(id); return undefined })
  await step('load dropped', async () => await ice.loadTable(id))
  return out
}

async function runAgainst (t: Test, upstream: string, ns: string): Promise<Outcome[]> {
  const proxy = await startProxy(t, { upstream, policy: guardedPolicy })
  return await flow(new IcebergRestCatalog({ baseUrl: proxy.url }), ns)
}

t.test('iceberg-js through iceguard, on the fixture and on the embedded catalog', { skip: toolchainSkip(parts) }, async t => {
  if (!needToolchain(t, parts)) return
  let fixture: RunningFixture
  t.before(async () => { fixture = await startFixture() })
  t.teardown(async () => { await fixture?.stop() })
  let n = 0
  onEveryTransport(t, t => {
    for (const ns of ['eng', 'guarded']) {
      t.test(`${ns}: the same answers from both catalogs`, async t => {
        // The fixture lives for the whole suite: a namespace of its own per run.
        const name = `${ns}${n++}`
        const onFixture = await runAgainst(t, fixture.url, name)
        const embedded = await startCatalog(t)
        const onEmbedded = await runAgainst(t, embedded.url, name)
        const by = (list: Outcome[], name: string): Outcome | undefined => list.find(o => o.step === name)
        for (const name of ['create namespace', 'create table', 'load table', 'widen qty to long', 'add column']) t.ok(by(onFixture, name)?.ok, `fixture: ${name} ${by(onFixture, name)?.message ?? ''}`)
        t.same(by(onFixture, 'add column')?.fields, [[1, 'id', 'long', true], [2, 'qty', 'long', false], [3, 'note', 'string', false], [4, 'tag', 'string', false]], 'fixture: widened and added')
        const narrow = by(onFixture, 'narrow qty to int')
        t.match(narrow, { ok: false, status: 400, type: 'IllegalArgumentException', message: /TYPE_PROMOTION_VALID/ }, 'the narrowing is refused with the rule')
        const drop = by(onFixture, 'drop note')
        if (ns === 'guarded') t.match(drop, { ok: false, status: 400, type: 'IllegalArgumentException', message: /COLUMN_NO_DROP/ }, 'the drop is refused by the policy')
        else t.match(drop, { ok: true }, 'the drop is allowed by the spec rules')
        t.match(by(onFixture, 'stale base'), { ok: false, status: 409, type: 'CommitFailedException' }, 'a stale base is the catalog\'s 409')
        t.match(by(onFixture, 'load dropped'), { ok: false, status: 404, type: 'NoSuchTableException' })
        // The embedded catalog answers like the reference: same steps, statuses, types and schemas.
        const shape = (list: Outcome[]): unknown => list.map(({ step, ok, status, type, fields }) => ({ step, ok, status, type, fields }))
        t.same(shape(onEmbedded), shape(onFixture), 'the embedded catalog answers every step as the fixture does')
      })
    }
  })
})
