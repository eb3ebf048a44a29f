/**
 * Schema changes end to end: HTTP to iceguard's admin API, through the gate, to the embedded
 * catalog, which records every request it receives. Each change kind and each enforce case is
 * checked in the table's resulting metadata and in the commit body the catalog received.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import { run } from '../../src/cli/main.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { startProxy } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { startCatalog, type RunningCatalog } from '../helpers/catalog.js'
import { createFixtureTable, loadMeta, postJson, schemaIds, startInterposer, type FieldJson, type Meta, type SchemaJson } from '../helpers/gate-fixtures.js'

type Json = Record<string, any>

function current (meta: Meta): SchemaJson {
  const s = meta.schemas.find(x => x['schema-id'] === meta['current-schema-id'])
  if (s === undefined) throw new Error('no current schema')
  return s
}

/** Path → id of the current schema (list elements and map parts as `element`, `key`, `value`). */
function paths (meta: Meta): Map<string, number> {
  return new Map([...schemaIds(current(meta))].map(([id, path]) => [path, id]))
}

function field (meta: Meta, path: string): FieldJson | undefined {
  let fields = current(meta).fields
  let found: FieldJson | undefined
  for (const part of path.split('.')) {
    found = fields.find(f => f.name === part)
    if (found === undefined) return undefined
    const tpe = found.type as { type?: string, fields?: FieldJson[] }
    fields = tpe.type === 'struct' ? tpe.fields ?? [] : []
  }
  return found
}

/** Commit POSTs the catalog received for one table. */
function commits (catalog: RunningCatalog, table: string): Json[] {
  return catalog.requests
    .filter(r => r.method === 'POST' && r.url.endsWith(`/tables/${table}`))
    .map(r => JSON.parse(r.body.toString('utf8')) as Json)
}

async function setup (t: Test, opts: { policy?: string, upstream?: (catalogUrl: string) => Promise<string> } = {}) {
  const catalog = await startCatalog(t)
  const upstream = opts.upstream === undefined ? catalog.url : await opts.upstream(catalog.url)
  const proxy = await startProxy(t, { upstream, policy: opts.policy ?? 'builtin:spec' })
  const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
  await ice.createNamespace({ namespace: ['db'] })
  const change = async (table: string, changes: unknown[], query = ''): Promise<{ status: number, json: Json }> => {
    const res = await postJson(`${proxy.url}/admin/v1/namespaces/db/tables/${table}/schema-changes${query}`, { changes })
    return { status: res.status, json: res.json as Json }
  }
  const meta = async (table: string): Promise<Meta> => await loadMeta(proxy.url, 'db', table)
  return { catalog, proxy, ice, change, meta }
}

onEveryTransport(t, t => {
  t.test('add-column: fresh ids for every nested field, last-column-id, the three requirements as the catalog received them', async t => {
    const { catalog, ice, change, meta } = await setup(t)
    await createFixtureTable(ice, 'orders', 2)
    const before = await meta('orders')
    const last = before['last-column-id']
    catalog.clearRequests()
    const res = await change('orders', [{
      op: 'add-column',
      name: 'shipping',
      doc: 'Where it goes',
      type: { type: 'struct', fields: [{ name: 'lines', type: { type: 'list', element: { type: 'struct', fields: [{ name: 'sku', type: 'string' }] } } }, { name: 'fees', type: 'map<string, decimal(9, 2)>' }] }
    }])
    t.equal(res.status, 200, res.status === 200 ? 'answered 200' : JSON.stringify(res.json))
    t.match(res.json, { committed: true, noop: false, verdict: 'allow', attempts: 1, 'schema-id': 1, 'last-column-id': last + 7 })
    t.match(res.json['metadata-location'], /metadata\.json$/)
    const after = await meta('orders')
    const ids = paths(after)
    const added = ['shipping', 'shipping.lines', 'shipping.fees', 'shipping.lines.element', 'shipping.lines.element.sku', 'shipping.fees.key', 'shipping.fees.value']
    t.same(added.map(p => ids.get(p)), [last + 1, last + 2, last + 3, last + 4, last + 5, last + 6, last + 7], 'every nested field, element, key and value has a fresh id above the old last-column-id')
    t.equal(after['last-column-id'], last + 7, 'last-column-id moved to the highest id handed out')
    t.equal(after['current-schema-id'], 1)
    t.equal(field(after, 'shipping')?.required, false)
    t.equal(field(after, 'shipping')?.doc, 'Where it goes')
    for (const [path, id] of paths(before)) t.equal(ids.get(path), id, `${path} keeps id ${id}`)

    const sent = commits(catalog, 'orders')
    t.equal(sent.length, 1, 'one commit reached the catalog')
    t.same(sent[0]?.requirements, [
      { type: 'assert-table-uuid', uuid: before['table-uuid'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': last },
      { type: 'assert-current-schema-id', 'current-schema-id': 0 }
    ])
    t.same(sent[0]?.updates.map((u: Json) => u.action), ['add-schema', 'set-current-schema'])
    t.equal(sent[0]?.updates[1]['schema-id'], -1)
    t.same(sent[0], res.json.request, 'the answer holds the exact request the catalog received')
  })

  t.test('every change kind, one request each, checked in the metadata', async t => {
    const { catalog, ice, change, meta } = await setup(t)
    await createFixtureTable(ice, 'kinds', 2)
    const start = await meta('kinds')
    const ids0 = paths(start)
    let last = start['last-column-id']

    const steps: Array<{ changes: unknown[], check: (m: Meta) => void }> = [
      {
        changes: [{ op: 'add-nested-column', parent: 'address', name: 'city', type: 'string' }],
        check: m => {
          t.equal(paths(m).get('address.city'), last + 1, 'add-nested-column into a struct')
          t.equal(m['last-column-id'], last + 1)
        }
      },
      { changes: [{ op: 'rename-column', path: 'qty', 'new-name': 'quantity' }], check: m => t.equal(paths(m).get('quantity'), ids0.get('qty'), 'rename keeps the id') },
      { changes: [{ op: 'make-column-optional', path: 'kind' }], check: m => t.equal(field(m, 'kind')?.required, false, 'made optional') },
      { changes: [{ op: 'update-column-type', path: 'quantity', type: 'long' }], check: m => t.equal(field(m, 'quantity')?.type, 'long', 'int -> long') },
      { changes: [{ op: 'update-doc', path: 'price', doc: 'Unit price' }], check: m => t.equal(field(m, 'price')?.doc, 'Unit price') },
      { changes: [{ op: 'move-column', path: 'day', first: true }, { op: 'move-column', path: 'price', after: 'day' }], check: m => t.same(current(m).fields.slice(0, 2).map(f => f.name), ['day', 'price']) },
      { changes: [{ op: 'delete-column', path: 'address.zip' }], check: m => t.equal(field(m, 'address.zip'), undefined, 'deleted') },
      {
        changes: [{ op: 'union-by-name', schema: { type: 'struct', fields: [{ id: 1, name: 'note', type: 'string', doc: 'n' }, { name: 'address', type: { type: 'struct', fields: [{ name: 'country', type: 'string' }] } }] } }],
        check: m => {
          t.same([paths(m).get('note'), paths(m).get('address.country')], [last + 2, last + 3], 'union-by-name: given ids ignored, fresh ones assigned')
          t.equal(m['last-column-id'], last + 3)
        }
      }
    ]
    let schemaId = 0
    for (const step of steps) {
      catalog.clearRequests()
      const res = await change('kinds', step.changes)
      t.equal(res.status, 200, res.status === 200 ? 'answered 200' : JSON.stringify(res.json))
      schemaId++
      const m = await meta('kinds')
      t.equal(m['current-schema-id'], schemaId, `a new schema ${schemaId}`)
      const sent = commits(catalog, 'kinds')
      t.equal(sent.length, 1)
      t.same(sent[0]?.requirements.map((r: Json) => r.type), ['assert-table-uuid', 'assert-last-assigned-field-id', 'assert-current-schema-id'])
      step.check(m)
    }
    last = (await meta('kinds'))['last-column-id']
    t.equal(last, start['last-column-id'] + 3, 'only adds handed out ids')
  })

  t.test('a table with a name mapping: the rename and the new column reach schema.name-mapping.default in the same commit', async t => {
    const { catalog, proxy, ice, change, meta } = await setup(t)
    await createFixtureTable(ice, 'mapped', 2)
    const mapping = [{ 'field-id': 1, names: ['id'] }, { 'field-id': 2, names: ['name'] }, { 'field-id': 4, names: ['qty'] }]
    const set = await postJson(`${proxy.url}/v1/namespaces/db/tables/mapped`, { requirements: [], updates: [{ action: 'set-properties', updates: { 'schema.name-mapping.default': JSON.stringify(mapping) } }] })
    t.equal(set.status, 200, 'mapping set')
    catalog.clearRequests()
    const res = await change('mapped', [{ op: 'rename-column', path: 'name', 'new-name': 'customer' }, { op: 'add-column', name: 'note', type: 'string' }])
    t.equal(res.status, 200, JSON.stringify(res.json))
    const sent = commits(catalog, 'mapped')
    t.equal(sent.length, 1, 'one commit reached the catalog')
    const updates = (sent[0] as { updates: Array<{ action: string }> }).updates
    t.same(updates.map(u => u.action), ['add-schema', 'set-current-schema', 'set-properties'])
    const after = JSON.parse(((await meta('mapped')).properties as Record<string, string> | undefined)?.['schema.name-mapping.default'] ?? 'null')
    t.same(after, [
      { 'field-id': 1, names: ['id'] }, { 'field-id': 2, names: ['name', 'customer'] }, { 'field-id': 4, names: ['qty'] },
      { 'field-id': paths(await meta('mapped')).get('note'), names: ['note'] }
    ], 'the table reads files with either name, and files with note')
  })

  t.test('no-op commits nothing; an equal older schema is reused; dry-run sends nothing and shows the exact commit', async t => {
    const { catalog, ice, change, meta } = await setup(t)
    await createFixtureTable(ice, 'reuse', 2)
    catalog.clearRequests()
    const noop = await change('reuse', [{ op: 'ensure-column', path: 'qty', type: 'int' }])
    t.match(noop.json, { committed: false, noop: true, 'schema-id': 0 })
    t.notOk('request' in noop.json)
    t.equal(commits(catalog, 'reuse').length, 0, 'nothing reached the catalog')

    const dry = await change('reuse', [{ op: 'add-column', name: 'tmp', type: 'int' }], '?dry-run=true')
    t.match(dry.json, { committed: false, 'dry-run': true, verdict: 'allow', 'schema-id': 1 })
    t.equal(commits(catalog, 'reuse').length, 0, 'a dry run commits nothing')
    const real = await change('reuse', [{ op: 'add-column', name: 'tmp', type: 'int' }])
    t.same(commits(catalog, 'reuse')[0], dry.json.request, 'the dry run showed exactly what is then sent')
    t.equal(real.json['schema-id'], 1)

    catalog.clearRequests()
    const back = await change('reuse', [{ op: 'delete-column', path: 'tmp' }])
    t.equal(back.status, 200, back.status === 200 ? 'answered 200' : JSON.stringify(back.json))
    const m = await meta('reuse')
    t.equal(m['current-schema-id'], 0, 'schema 0 is current again')
    t.equal(m.schemas.length, 2, 'no third schema')
    t.same(commits(catalog, 'reuse')[0]?.updates, [{ action: 'set-current-schema', 'schema-id': 0 }])
    t.same(commits(catalog, 'reuse')[0]?.requirements.map((r: Json) => r.type), ['assert-table-uuid', 'assert-last-assigned-field-id', 'assert-current-schema-id'])
  })

  t.test('refused changes and bad input are Iceberg errors naming the change and path; nothing reaches the catalog', async t => {
    const { catalog, ice, change, proxy } = await setup(t)
    await createFixtureTable(ice, 'bad', 2)
    catalog.clearRequests()
    const narrow = await change('bad', [{ op: 'add-column', name: 'ok', type: 'int' }, { op: 'update-column-type', path: 'price', type: 'decimal(8, 2)' }])
    t.equal(narrow.status, 400)
    t.equal(narrow.json.error.code, 400)
    t.equal(narrow.json.error.type, 'ValidationException')
    t.match(narrow.json.error.message, /Cannot evolve db\.bad: Cannot apply change 1 \(update-column-type price\).*decimal\(10, 2\) -> decimal\(8, 2\).*nothing was committed/)
    const unknown = await change('bad', [{ op: 'drop', path: 'x' }])
    t.equal(unknown.status, 400)
    t.match(unknown.json.error.message, /changes\[0\]\.op/)
    const missing = await postJson(`${proxy.url}/admin/v1/namespaces/db/tables/nope/schema-changes`, { changes: [{ op: 'add-column', name: 'x', type: 'int' }] })
    t.equal(missing.status, 404, 'a missing table is the catalog\'s 404')
    t.equal(commits(catalog, 'bad').length, 0)
  })

  t.test('ensure-column: added, nothing, doc only, promoted, refused; legacy-archival in one commit; partition sources never archived', async t => {
    const { catalog, ice, change, meta } = await setup(t)
    await createFixtureTable(ice, 'ens', 2)
    const start = await meta('ens')
    const last = start['last-column-id']
    const qtyId = paths(start).get('qty')

    t.equal((await change('ens', [{ op: 'ensure-column', path: 'address.city', type: 'string' }])).json.committed, true)
    t.equal(paths(await meta('ens')).get('address.city'), last + 1, 'absent → added')
    catalog.clearRequests()
    const same = await change('ens', [{ op: 'ensure-column', path: 'address.city', type: 'string' }, { op: 'ensure-column', path: 'tags', type: 'list<string>' }])
    t.equal(same.json.noop, true, 'equivalent → nothing')
    t.equal(commits(catalog, 'ens').length, 0)
    await change('ens', [{ op: 'ensure-column', path: 'address.city', type: 'string', doc: 'City' }])
    t.equal(field(await meta('ens'), 'address.city')?.doc, 'City', 'equivalent with a new doc → only the doc')
    await change('ens', [{ op: 'ensure-column', path: 'qty', type: 'long' }])
    t.equal(field(await meta('ens'), 'qty')?.type, 'long', 'promotable → promoted')
    const refused = await change('ens', [{ op: 'ensure-column', path: 'qty', type: 'string' }])
    t.equal(refused.status, 400)
    t.match(refused.json.error.message, /ensure-column qty.*qty is long, wanted string.*legacy-archival/)

    catalog.clearRequests()
    const archived = await change('ens', [{ op: 'ensure-column', path: 'qty', type: 'string', doc: 'now text', 'legacy-archival': true }])
    t.equal(archived.status, 200, archived.status === 200 ? 'answered 200' : JSON.stringify(archived.json))
    t.equal(commits(catalog, 'ens').length, 1, 'archive and add in exactly one commit')
    const m = await meta('ens')
    t.equal(paths(m).get('qty__legacy_1'), qtyId, 'the old column keeps its id and data under the legacy name')
    t.match(field(m, 'qty__legacy_1')?.doc, /^ARCHIVED/)
    t.equal(field(m, 'qty__legacy_1')?.required, false)
    t.equal(paths(m).get('qty'), last + 2, 'a fresh column takes the name')
    t.equal(field(m, 'qty')?.type, 'string')
    t.equal(m['last-column-id'], last + 2)

    catalog.clearRequests()
    const partition = await change('ens', [{ op: 'ensure-column', path: 'day', type: 'string', 'legacy-archival': true }])
    t.equal(partition.status, 400)
    t.match(partition.json.error.message, /cannot archive day .*partition spec/)
    const sort = await change('ens', [{ op: 'ensure-column', path: 'name', type: 'int', 'legacy-archival': true }])
    t.match(sort.json.error.message, /cannot archive name .*sort order/)
    t.equal(commits(catalog, 'ens').length, 0, 'nothing reached the catalog')
    t.equal(paths(await meta('ens')).get('day'), paths(start).get('day'), 'the partition source is untouched')
  })

  t.test('ensure-rename: rename, done already, neither, both (archive the blocker and rename in one commit)', async t => {
    const { catalog, ice, change, meta } = await setup(t)
    await createFixtureTable(ice, 'ren', 2)
    const start = await meta('ren')
    const ids = paths(start)
    const first = await change('ren', [{ op: 'ensure-rename', from: 'price', to: 'unit_price' }])
    t.equal(first.json.committed, true)
    t.equal(paths(await meta('ren')).get('unit_price'), ids.get('price'))
    catalog.clearRequests()
    const again = await change('ren', [{ op: 'ensure-rename', from: 'price', to: 'unit_price' }])
    t.match(again.json, { noop: true, warnings: [] }, 'done already → nothing')
    const neither = await change('ren', [{ op: 'ensure-rename', from: 'a1', to: 'a2' }])
    t.match(neither.json, { noop: true, warnings: [/neither a1 nor a2 exists/] })
    t.equal(commits(catalog, 'ren').length, 0)

    const both = await change('ren', [{ op: 'ensure-rename', from: 'qty', to: 'kind' }])
    t.equal(both.status, 200, both.status === 200 ? 'answered 200' : JSON.stringify(both.json))
    t.equal(commits(catalog, 'ren').length, 1, 'one commit')
    const m = await meta('ren')
    t.equal(paths(m).get('kind'), ids.get('qty'), 'the renamed column has the name')
    t.equal(paths(m).get('kind__legacy_1'), ids.get('kind'), 'the blocker is archived with its data')
    t.equal(m['last-column-id'], start['last-column-id'], 'no ids handed out')
    const blocked = await change('ren', [{ op: 'ensure-rename', from: 'qty2', to: 'day' }, { op: 'add-column', name: 'qty2', type: 'int' }])
    t.equal(blocked.status, 200, 'only old name missing and the new one present: nothing to do for the rename')
    const partition = await change('ren', [{ op: 'ensure-rename', from: 'qty2', to: 'day' }])
    t.equal(partition.status, 400, 'a partition source is never archived as a blocker')
    t.match(partition.json.error.message, /cannot archive day/)
  })

  t.test('two schema changes at once on one table both end applied, each with its own fresh ids', async t => {
    let armed: (() => void) | undefined
    const { catalog, ice, change, meta } = await setup(t, {
      upstream: async (catalogUrl) => {
      // Both requests load the table (their own load and the gate's) before either commit is let through.
        const hop = await startInterposer(t, catalogUrl, { holdPostsUntilGets: 4 })
        armed = () => hop.arm()
        return hop.url
      }
    })
    await createFixtureTable(ice, 'race', 2)
    const start = await meta('race')
    const last = start['last-column-id']
    catalog.clearRequests()
    armed?.()
    const [a, b] = await Promise.all([
      change('race', [{ op: 'add-column', name: 'a', type: 'struct<x: int, y: list<string>>' }]),
      change('race', [{ op: 'add-column', name: 'b', type: 'map<string, long>' }])
    ])
    t.equal(a.status, 200, a.status === 200 ? 'answered 200' : JSON.stringify(a.json))
    t.equal(b.status, 200, b.status === 200 ? 'answered 200' : JSON.stringify(b.json))
    t.same([a.json.committed, b.json.committed], [true, true])
    t.same([a.json.attempts, b.json.attempts].sort(), [1, 2], 'one won at once, the other re-applied after losing the race')
    const m = await meta('race')
    const ids = paths(m)
    const added = ['a', 'a.x', 'a.y', 'a.y.element', 'b', 'b.key', 'b.value'].map(p => ids.get(p))
    t.notOk(added.includes(undefined), 'nothing lost: both columns and their nested fields are there')
    t.equal(new Set(added).size, 7, 'every id is distinct')
    t.ok(added.every(id => (id as number) > last), 'all above the old last-column-id')
    t.equal(m['last-column-id'], last + 7)
    t.equal(m['current-schema-id'], 2)
    const sent = commits(catalog, 'race')
    t.equal(sent.length, 3, 'two commits and one retry reached the catalog')
  })

  t.test('a plan for a contract, then its apply, leaves the table meeting it; a second plan is empty', async t => {
    const { catalog, ice, proxy, meta } = await setup(t)
    await createFixtureTable(ice, 'con', 2)
    const contract = `
columns:
  - { name: id, type: long, required: true }
  - { name: qty, type: long, doc: Quantity }
  - { name: kind, type: string, required: false }
  - { name: note, type: string, doc: Free text }
  - { name: customer.id, type: long }
  - { name: name, type: string }
  - { name: day, type: date }
  - { name: price, type: "decimal(12, 2)" }
`
    const url = `${proxy.url}/admin/v1/namespaces/db/tables/con/schema-changes/plan`
    catalog.clearRequests()
    const plan = await postJson(url, { contract })
    t.equal(plan.status, 200, plan.status === 200 ? 'answered 200' : plan.text)
    const body = plan.json as Json
    t.same(body.changes, [
      { op: 'add-column', name: 'note', type: 'string', doc: 'Free text' },
      { op: 'add-column', name: 'customer', type: { type: 'struct', fields: [{ id: 0, name: 'id', required: false, type: 'long' }] } },
      { op: 'update-column-type', path: 'qty', type: 'long' },
      { op: 'update-doc', path: 'qty', doc: 'Quantity' },
      { op: 'make-column-optional', path: 'kind' },
      { op: 'update-column-type', path: 'price', type: 'decimal(12, 2)' }
    ])
    t.same(body.unresolved, [])
    t.match(body, { committed: false, verdict: 'allow', request: { updates: [{ action: 'add-schema' }, { action: 'set-current-schema' }] } })
    t.equal(commits(catalog, 'con').length, 0, 'a plan commits nothing')

    const applied = await postJson(`${url}?apply=true`, { contract })
    t.equal(applied.status, 200, applied.status === 200 ? 'answered 200' : applied.text)
    t.equal((applied.json as Json).committed, true)
    t.equal(commits(catalog, 'con').length, 1)

    const report = await postJson(`${proxy.url}/admin/v1/namespaces/db/tables/con/schema-changes/plan`, { contract: { columns: [{ name: 'qty', type: 'long', doc: 'Quantity' }, { name: 'customer.id', type: 'long' }, { name: 'note', type: 'string', doc: 'Free text' }] } })
    t.same((report.json as Json).changes, [], 'the JSON form of (part of) the contract agrees')
    const second = await postJson(url, { contract })
    t.same((second.json as Json).changes, [], 'a second plan is empty')
    t.equal((second.json as Json).noop, true)
    const m = await meta('con')
    t.equal(field(m, 'customer.id')?.type, 'long')
    t.equal(field(m, 'qty')?.doc, 'Quantity')

    const bad = await postJson(url, { contract: 'columns:\n  - { name: x, type: strnig }\n' })
    t.equal(bad.status, 400)
    t.match((bad.json as Json).error.message, /Invalid contract/)
  })

  t.test('the policy applies: the gate refuses what it refuses for any client', async t => {
    const dir = t.testdir()
    const policy = join(dir, 'policy.yaml')
    writeFileSync(policy, 'version: 1\nextends: builtin:recommended\nnamespaces:\n  db:\n    rules:\n      COLUMN_NO_DROP: error\n')
    const { catalog, ice, change, meta } = await setup(t, { policy })
    await createFixtureTable(ice, 'pol', 2)
    catalog.clearRequests()
    const dry = await change('pol', [{ op: 'delete-column', path: 'qty' }], '?dry-run=true')
    t.match(dry.json, { verdict: 'deny', findings: [{ rule: 'COLUMN_NO_DROP', severity: 'error' }] })
    const res = await change('pol', [{ op: 'delete-column', path: 'qty' }])
    t.equal(res.status, 400)
    t.equal(res.json.error.type, 'IllegalArgumentException', 'the gate\'s own refusal, as any client gets it')
    t.match(res.json.error.message, /COLUMN_NO_DROP/)
    t.equal(commits(catalog, 'pol').length, 0, 'the refused commit never reached the catalog')
    t.ok(field(await meta('pol'), 'qty'), 'the column is still there')
    const warned = await change('pol', [{ op: 'add-column', name: 'undocumented', type: 'int' }])
    t.match(warned.json, { committed: true, verdict: 'warn', findings: [{ rule: 'COLUMN_DOC_REQUIRED', severity: 'warn' }] })
  })

  t.test('CLI: iceguard evolve and iceguard plan talk to a running iceguard', async t => {
    const { ice, proxy, meta } = await setup(t)
    await createFixtureTable(ice, 'cli', 2)
    const dir = t.testdir({ 'contract.yaml': 'columns:\n  - { name: note, type: string, doc: From the contract }\n' })
    const cli = async (args: string[]): Promise<{ code: number, out: string, err: string }> => {
      let out = ''
      let err = ''
      const io: CliIo = { stdout: s => { out += s }, stderr: s => { err += s }, env: {}, cwd: dir }
      return { code: await run(args, io), out, err }
    }
    const dry = await cli(['evolve', '--url', proxy.url, '--table', 'db.cli', '--add-column', 'extra:struct<a: int>', '--doc', 'Extra', '--update-type', 'qty:long', '--dry-run'])
    t.equal(dry.code, EXIT.OK, dry.err)
    t.match(dry.out, /db\.cli: dry run, verdict allow: would commit schema 1/)
    t.match(dry.out, /request: \{"requirements"/)
    t.equal((await meta('cli'))['current-schema-id'], 0, 'a dry run commits nothing')
    const real = await cli(['evolve', '--url', proxy.url, '--table', 'db.cli', '--add-column', 'extra:struct<a: int>', '--doc', 'Extra', '--update-type', 'qty:long', '--format', 'json'])
    t.equal(real.code, EXIT.OK, real.err)
    t.match(JSON.parse(real.out), { committed: true, 'schema-id': 1 })
    t.equal(field(await meta('cli'), 'extra')?.doc, 'Extra')
    const refused = await cli(['evolve', '--url', proxy.url, '--table', 'db.cli', '--update-type', 'qty:int'])
    t.equal(refused.code, EXIT.DENY)
    t.match(refused.err, /ValidationException: Cannot evolve db\.cli/)
    t.equal((await cli(['evolve', '--url', proxy.url, '--table', 'db.cli'])).code, EXIT.USAGE, 'no change named')

    const plan = await cli(['plan', '--url', proxy.url, '--table', 'db.cli', '--contract', 'contract.yaml'])
    t.equal(plan.code, EXIT.OK, plan.err)
    t.match(plan.out, /1 change\(s\):\n {2}\{"op":"add-column","name":"note","type":"string","doc":"From the contract"\}/)
    const apply = await cli(['plan', '--url', proxy.url, '--table', 'db.cli', '--contract', 'contract.yaml', '--apply'])
    t.equal(apply.code, EXIT.OK, apply.err)
    t.match(apply.out, /committed schema 2/)
    const after = await cli(['plan', '--url', proxy.url, '--table', 'db.cli', '--contract', 'contract.yaml'])
    t.match(after.out, /meets the contract/)
  })

  t.test('a schema change parses the table once: the gate revalidates the admin read with If-None-Match', async t => {
    const { catalog, ice, change } = await setup(t)
    await createFixtureTable(ice, 'once', 2)
    catalog.clearRequests()
    const res = await change('once', [{ op: 'add-column', name: 'note', type: 'string' }])
    t.equal(res.status, 200, JSON.stringify(res.json))
    const loads = catalog.requests.filter(r => r.method === 'GET' && r.url.startsWith('/v1/namespaces/db/tables/once'))
    t.equal(loads.length, 2, 'the admin read and the gate\'s base load')
    t.equal(loads[0]?.headers['if-none-match'], undefined, 'the first read is a full load')
    t.type(loads[1]?.headers['if-none-match'], 'string', 'the gate revalidates what the admin read cached')
    t.equal(commits(catalog, 'once').length, 1, 'one commit')
  })
})
