/**
 * The gate end to end: real HTTP through iceguard to the embedded catalog, which accepts any
 * well-formed change, so every refusal here is the gate's doing. Refusals are checked at the
 * upstream too: no POST may reach it.
 */
import t from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { startProxy } from '../helpers/index.js'
import { startCatalog } from '../helpers/catalog.js'
import {
  BIG_ID, clientShapes, createFixtureTable, cloneSchema, fieldByPath, loadMeta, posts, postJson, schemaIds,
  startInterposer, type Meta, type SchemaJson
} from '../helpers/gate-fixtures.js'
import { ALL_RULES } from '../../src/engine/rules/index.js'
import { onEveryTransport } from '../helpers/transports.js'

onEveryTransport(t, t => {
  t.test('every spec rule refuses a violating commit, in every client dialect, and nothing reaches the upstream', async t => {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec' })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'main', 2)
    await createFixtureTable(ice, 'v3t', 3)
    // A table with history: `qty` dropped legally, so its id is one a new field may not take.
    await createFixtureTable(ice, 'hist', 2)
    {
      const meta = await loadMeta(proxy.url, 'db', 'hist')
      const s = cloneSchema(meta)
      s.fields = s.fields.filter(f => f.name !== 'qty')
      const res = await postJson(`${proxy.url}/v1/namespaces/db/tables/hist`, clientShapes.java(meta, s, 'db', 'hist'))
      t.equal(res.status, 200, 'setup: dropping a plain column is legal')
      // Then a column whose id leaves a gap: the ids in the gap were never used, yet lie below last-column-id.
      const next = await loadMeta(proxy.url, 'db', 'hist')
      const g = cloneSchema(next)
      g.fields.push({ id: next['last-column-id'] + 2, name: 'gap', required: false, type: 'string' })
      t.equal((await postJson(`${proxy.url}/v1/namespaces/db/tables/hist`, clientShapes.java(next, g, 'db', 'hist'))).status, 200, 'setup: an id above last-column-id with a gap is legal')
    }

  type Case = { table: string, violate: (s: SchemaJson, meta: Meta) => SchemaJson | { schema?: SchemaJson, updates: unknown[] } }
  const cases: Record<string, Case> = {
    TYPE_PROMOTION_VALID: { table: 'main', violate: s => { fieldByPath(s, 'price').type = 'decimal(8,2)'; return s } },
    FIELD_ID_UNIQUE: { table: 'main', violate: s => { s.fields.push({ id: fieldByPath(s, 'name').id, name: 'dup', required: false, type: 'string' }); return s } },
    FIELD_ID_NOT_RESERVED: { table: 'main', violate: s => { s.fields.push({ id: 2147483500, name: 'meta_like', required: false, type: 'string' }); return s } },
    FIELD_ID_NEW_ABOVE_LAST: { table: 'hist', violate: (s, meta) => { s.fields.push({ id: meta['last-column-id'] - 1, name: 'never_used', required: false, type: 'int' }); return s } },
    FIELD_ID_NOT_REUSED: { table: 'hist', violate: (s, meta) => { s.fields.push({ id: droppedId(meta, 'qty'), name: 'qty_again', required: false, type: 'long' }); return s } },
    FIELD_KIND_STABLE: { table: 'main', violate: s => { const a = fieldByPath(s, 'address'); a.type = 'string'; return s } },
    FIELD_PARENT_STABLE: {
      table: 'main',
      violate: s => {
        const address = fieldByPath(s, 'address')
        const struct = address.type as { fields: SchemaJson['fields'] }
        const zip = struct.fields.find(f => f.name === 'zip')!
        struct.fields = struct.fields.filter(f => f !== zip)
        s.fields.push(zip)
        return s
      }
    },
    IDENTIFIER_FIELD_NOT_DROPPED: { table: 'main', violate: s => { s.fields = s.fields.filter(f => f.name !== 'id'); return s } },
    IDENTIFIER_FIELD_VALID: { table: 'main', violate: s => { s['identifier-field-ids'] = [fieldByPath(s, 'name').id]; return s } },
    INITIAL_DEFAULT_UNCHANGED: { table: 'v3t', violate: s => { fieldByPath(s, 'level')['initial-default'] = 8; return s } },
    MAP_KEY_UNCHANGED: { table: 'main', violate: s => { (fieldByPath(s, 'attrs').type as Record<string, unknown>).key = 'long'; return s } },
    NULLABILITY_NOT_TIGHTENED: { table: 'main', violate: s => { fieldByPath(s, 'name').required = true; return s } },
    PARTITION_SOURCE_NOT_DROPPED: { table: 'main', violate: s => { s.fields = s.fields.filter(f => f.name !== 'day'); return s } },
    // The identity partition field `day` keeps its source (renamed); a new column takes its name.
    PARTITION_NAME_NOT_TAKEN: { table: 'main', violate: (s, meta) => { fieldByPath(s, 'day').name = 'day_old'; s.fields.push({ id: meta['last-column-id'] + 1, name: 'day', required: false, type: 'int' }); return s } },
    PARTITION_SOURCE_TYPE_SAFE: { table: 'v3t', violate: s => { fieldByPath(s, 'day').type = 'timestamp'; return s } },
    REQUEST_WELL_FORMED: { table: 'main', violate: s => { s.fields.push({ id: 900, name: 'oops', required: false, type: 'strnig' }); return s } },
    REQUIRED_FIELD_HAS_DEFAULT: { table: 'main', violate: (s, meta) => { s.fields.push({ id: meta['last-column-id'] + 1, name: 'must', required: true, type: 'string' }); return s } },
    SORT_SOURCE_NOT_DROPPED: { table: 'main', violate: s => { s.fields = s.fields.filter(f => f.name !== 'name'); return s } },
    CURRENT_SCHEMA_KNOWN: { table: 'main', violate: () => ({ updates: [{ action: 'set-current-schema', 'schema-id': 99 }] }) },
    CURRENT_SCHEMA_NOT_REMOVED: { table: 'main', violate: (_s, meta) => ({ updates: [{ action: 'remove-schemas', 'schema-ids': [meta['current-schema-id']] }] }) },
    FIELD_NAME_UNIQUE: { table: 'main', violate: (s, meta) => { s.fields.push({ id: meta['last-column-id'] + 1, name: 'name', required: false, type: 'string' }); return s } },
    DEFAULT_VALUE_VALID: { table: 'v3t', violate: (s, meta) => { s.fields.push({ id: meta['last-column-id'] + 1, name: 'bad_default', required: false, type: 'int', 'initial-default': 'abc', 'write-default': 'abc' }); return s } },
    FORMAT_VERSION_TYPES: { table: 'main', violate: (s, meta) => { s.fields.push({ id: meta['last-column-id'] + 1, name: 'ts_ns', required: false, type: 'timestamp_ns' }); return s } }
  }
  // Rules that a commit cannot trigger on its own, with the reason.
  const notByCommit: Record<string, string> = {}

  const specRules = ALL_RULES.filter(r => r.category === 'spec').map(r => r.id)
  t.same(specRules.filter(id => cases[id] === undefined && notByCommit[id] === undefined), [], 'every spec rule has a violating commit here')

  for (const ruleId of specRules) {
    const c = cases[ruleId]
    if (c === undefined) continue
    for (const [client, shape] of Object.entries(clientShapes)) {
      const meta = await loadMeta(proxy.url, 'db', c.table)
      const out = c.violate(cloneSchema(meta), meta)
      const body = 'updates' in out ? shape(meta, out.schema, 'db', c.table, out.updates) : shape(meta, out, 'db', c.table)
      catalog.clearRequests()
      const res = await postJson(`${proxy.url}/v1/namespaces/db/tables/${c.table}`, body)
      const error = (res.json as { error: { code: number, type: string, message: string, stack?: string[] } }).error
      t.equal(res.status, 400, `${ruleId} as ${client}: 400`)
      t.equal(error.code, 400)
      t.equal(error.type, 'IllegalArgumentException')
      t.match(error.message, ruleId, `${ruleId} as ${client}: the message names the rule`)
      t.ok(error.stack?.some(l => l.includes(ruleId)), 'stack holds the finding line')
      t.equal(posts(catalog).length, 0, `${ruleId} as ${client}: the upstream received no POST`)
    }
  }
  const after = await loadMeta(proxy.url, 'db', 'main')
  t.equal(after.schemas.length, 1, 'the table still has its one schema')
  })

  function droppedId (meta: Meta, name: string): number {
    for (const s of meta.schemas) {
      const f = s.fields.find(x => x.name === name)
      if (f !== undefined) return f.id
    }
    throw new Error(`no field ${name} in history`)
  }

  t.test('legal evolutions reach the upstream and the table shows the new schema', async t => {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec' })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'evo', 2)

    const steps: Array<[string, keyof typeof clientShapes, (s: SchemaJson, meta: Meta) => SchemaJson, (s: SchemaJson) => boolean]> = [
      ['add an optional top-level column', 'java', (s, m) => { s.fields.push({ id: m['last-column-id'] + 1, name: 'note', required: false, type: 'string' }); return s }, s => s.fields.some(f => f.name === 'note')],
      ['add an optional nested column', 'pyiceberg', (s, m) => { (fieldByPath(s, 'address').type as { fields: unknown[] }).fields.push({ id: m['last-column-id'] + 1, name: 'city', required: false, type: 'string' }); return s }, s => fieldByPath(s, 'address.city') !== undefined],
      ['rename a column', 'rust', s => { fieldByPath(s, 'note').name = 'remark'; return s }, s => s.fields.some(f => f.name === 'remark') && !s.fields.some(f => f.name === 'note')],
      ['widen int to long', 'curl', s => { fieldByPath(s, 'qty').type = 'long'; return s }, s => fieldByPath(s, 'qty').type === 'long'],
      ['widen a decimal', 'java', s => { fieldByPath(s, 'price').type = 'decimal(12,2)'; return s }, s => /^decimal\(12,\s*2\)$/.test(String(fieldByPath(s, 'price').type))],
      ['reorder columns', 'pyiceberg', s => { s.fields.reverse(); return s }, s => s.fields[s.fields.length - 1]?.name === 'id'],
      ['drop a plain column', 'rust', s => { s.fields = s.fields.filter(f => f.name !== 'remark'); return s }, s => !s.fields.some(f => f.name === 'remark')]
    ]
    const evolve = async (what: string, client: keyof typeof clientShapes, change: (s: SchemaJson, meta: Meta) => SchemaJson, check: (s: SchemaJson) => boolean): Promise<void> => {
      const meta = await loadMeta(proxy.url, 'db', 'evo')
      catalog.clearRequests()
      const res = await postJson(`${proxy.url}/v1/namespaces/db/tables/evo`, clientShapes[client](meta, change(cloneSchema(meta), meta), 'db', 'evo'))
      t.equal(res.status, 200, `${what} (${client}): 200 ${res.status === 200 ? '' : res.text}`)
      t.equal(posts(catalog).length, 1, `${what}: forwarded once`)
      const now = await loadMeta(proxy.url, 'db', 'evo')
      t.ok(check(cloneSchema(now)), `${what}: the table shows it`)
      t.not(now['current-schema-id'], meta['current-schema-id'], `${what}: a new schema is current`)
    }
    for (const [what, client, change, check] of steps) await evolve(what, client, change, check)

    // Revert to an equal older schema (undoing the drop): Java sends only set-current-schema with
    // the old id; the dropped column was optional, so it may come back.
    const meta = await loadMeta(proxy.url, 'db', 'evo')
    const revertTo = meta.schemas[meta.schemas.length - 2]!
    catalog.clearRequests()
    const res = await postJson(`${proxy.url}/v1/namespaces/db/tables/evo`, {
      requirements: [{ type: 'assert-table-uuid', uuid: meta['table-uuid'] }, { type: 'assert-current-schema-id', 'current-schema-id': meta['current-schema-id'] }],
      updates: [{ action: 'set-current-schema', 'schema-id': revertTo['schema-id'] }]
    })
    t.equal(res.status, 200, `revert to an older schema: 200 ${res.text}`)
    t.equal(posts(catalog).length, 1)
    const reverted = await loadMeta(proxy.url, 'db', 'evo')
    t.equal(reverted['current-schema-id'], revertTo['schema-id'], 'the older schema is current again')
    t.ok(cloneSchema(reverted).fields.some(f => f.name === 'remark'), 'the dropped optional column is back')

    await evolve('make a required column optional', 'curl', s => { fieldByPath(s, 'kind').required = false; return s }, s => fieldByPath(s, 'kind').required === false)

    // iceberg-js as a client of the gate: the same evolution through its own request code.
    const viaJs = await loadMeta(proxy.url, 'db', 'evo')
    const s = cloneSchema(viaJs)
    s.fields.push({ id: viaJs['last-column-id'] + 1, name: 'from_js', required: false, type: 'boolean' })
    s['schema-id'] = Math.max(...viaJs.schemas.map(x => x['schema-id'])) + 1
    await ice.updateTable({ namespace: ['db'], name: 'evo' }, {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': viaJs['current-schema-id'] }],
      updates: [{ action: 'add-schema', schema: s as never }, { action: 'set-current-schema', 'schema-id': -1 }]
    })
    t.ok(cloneSchema(await loadMeta(proxy.url, 'db', 'evo')).fields.some(f => f.name === 'from_js'), 'iceberg-js commit went through')
    await t.rejects(ice.updateTable({ namespace: ['db'], name: 'evo' }, {
      requirements: [],
      updates: [{ action: 'add-schema', schema: { ...cloneSchema(await loadMeta(proxy.url, 'db', 'evo')), fields: [] } as never }, { action: 'set-current-schema', 'schema-id': -1 }]
    }), /IDENTIFIER_FIELD_NOT_DROPPED/, 'iceberg-js surfaces the refusal message')
  })

  t.test('a data commit is forwarded byte for byte, with no extra upstream call', async t => {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec' })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'facts', 2)
    const meta = await loadMeta(proxy.url, 'db', 'facts')
    // Odd spacing and key order on purpose: only the exact bytes prove nothing was re-serialised.
    const raw = `{ "requirements" : [ {"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null} ],
    "updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID},"timestamp-ms":1700000000000,
    "manifest-list":"${meta.location}/metadata/snap-${BIG_ID}.avro","summary":{"operation":"append"},"schema-id":0,"sequence-number":1}},
    {"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG_ID}},
    {"action":"set-properties","updates":{"owner":"etl"}}]}`
    catalog.clearRequests()
    const res = await request(`${proxy.url}/v1/namespaces/db/tables/facts`, { method: 'POST', body: raw, headers: { 'content-type': 'application/json' } })
    const text = await res.body.text()
    t.equal(res.statusCode, 200, text)
    t.same(catalog.requests.map(r => r.method), ['POST'], 'one request upstream: the commit itself, no GET before it')
    t.ok(catalog.requests[0]!.body.equals(Buffer.from(raw)), 'the bytes arrived unchanged')
    t.ok(text.includes(BIG_ID), 'the catalog kept the 64-bit snapshot id')
  })

  t.test('two concurrent schema commits from one base: exactly one wins, the other gets 409', async t => {
    const catalog = await startCatalog(t)
    // Holds each commit until both gates have loaded their base, so the race is real every run.
    const barrier = await startInterposer(t, catalog.url, { holdPostsUntilGets: 2 })
    const proxy = await startProxy(t, { upstream: barrier.url, policy: 'builtin:spec' })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })

    for (const client of ['java', 'curl'] as const) {
      const table = `race_${client}`
      await createFixtureTable(ice, table, 2)
      const meta = await loadMeta(proxy.url, 'db', table)
      const next = meta['last-column-id'] + 1
      const a = cloneSchema(meta)
      a.fields.push({ id: next, name: 'from_a', required: false, type: 'string' })
      const b = cloneSchema(meta)
      b.fields.push({ id: next, name: 'from_b', required: false, type: 'long' })
      barrier.arm()
      const [ra, rb] = await Promise.all([
        postJson(`${proxy.url}/v1/namespaces/db/tables/${table}`, clientShapes[client](meta, a, 'db', table)),
        postJson(`${proxy.url}/v1/namespaces/db/tables/${table}`, clientShapes[client](meta, b, 'db', table))
      ])
      t.same([ra.status, rb.status].sort(), [200, 409], `${client}: one 200 and one 409`)
      const loser = ra.status === 409 ? ra : rb
      const lost = loser.json as { error: { type: string, code: number, message: string } }
      t.equal(lost.error.type, 'CommitFailedException')
      t.equal(lost.error.code, 409)
      t.match(lost.error.message, /schema|field id/i, 'the 409 names the requirement that failed')
      const final = await loadMeta(proxy.url, 'db', table)
      t.equal(final.schemas.length, 2, `${client}: exactly one schema was added`)
      const byId = new Map<number, Set<string>>()
      for (const s of final.schemas) for (const [id, name] of schemaIds(s)) byId.set(id, (byId.get(id) ?? new Set()).add(name))
      t.ok([...byId.values()].every(names => names.size === 1), `${client}: no id ever held two fields`)
    }
  })

  t.test('an injected requirement keeps a 64-bit snapshot id elsewhere in the body exact', async t => {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec' })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'inj', 2)
    const meta = await loadMeta(proxy.url, 'db', 'inj')
    const s = cloneSchema(meta)
    s.fields.push({ id: meta['last-column-id'] + 1, name: 'extra', required: false, type: 'double' })
    const raw = `{"requirements":[],"updates":[${JSON.stringify({ action: 'add-schema', schema: s })},{"action":"set-current-schema","schema-id":-1},` +
    `{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID},"timestamp-ms":1700000000000,"manifest-list":"${meta.location}/metadata/snap.avro","summary":{"operation":"append"},"sequence-number":1}},` +
    '{"action":"set-properties","updates":{"ratio":"1.0"}}]}'
    catalog.clearRequests()
    const res = await request(`${proxy.url}/v1/namespaces/db/tables/inj`, { method: 'POST', body: raw, headers: { 'content-type': 'application/json' } })
    t.equal(res.statusCode, 200, await res.body.text())
    const sent = posts(catalog)[0]!.body.toString('utf8')
    t.ok(sent.includes(`"snapshot-id":${BIG_ID}`), 'the snapshot id keeps every digit')
    t.ok(sent.includes(`{"type":"assert-current-schema-id","current-schema-id":${meta['current-schema-id']}}`), 'assert-current-schema-id injected')
    t.ok(sent.includes(`{"type":"assert-last-assigned-field-id","last-assigned-field-id":${meta['last-column-id']}}`), 'assert-last-assigned-field-id injected')
    t.ok(sent.includes('"timestamp-ms":1700000000000'), 'other numbers keep their spelling')
    const all = await request(`${proxy.url}/v1/namespaces/db/tables/inj?snapshots=all`)
    t.ok((await all.body.text()).includes(BIG_ID), 'the catalog stored the exact snapshot id')
  })

  t.test('assertions=require refuses a schema commit without the requirements, naming them', async t => {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec', 'require-assertions': true })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'req', 2)
    const meta = await loadMeta(proxy.url, 'db', 'req')
    const s = cloneSchema(meta)
    s.fields.push({ id: meta['last-column-id'] + 1, name: 'n', required: false, type: 'int' })
    catalog.clearRequests()
    const bare = await postJson(`${proxy.url}/v1/namespaces/db/tables/req`, clientShapes.curl(meta, s, 'db', 'req'))
    t.equal(bare.status, 400)
    const error = (bare.json as { error: { message: string, type: string } }).error
    t.match(error.message, 'assert-current-schema-id')
    t.match(error.message, 'assert-last-assigned-field-id')
    t.equal(posts(catalog).length, 0, 'nothing forwarded')
    const java = await postJson(`${proxy.url}/v1/namespaces/db/tables/req`, clientShapes.java(meta, s, 'db', 'req'))
    t.equal(java.status, 200, 'Java sends both: accepted as is')
    t.notMatch(posts(catalog)[0]!.body.toString(), /"assert-current-schema-id"[^]*"assert-current-schema-id"/, 'nothing added twice')
  })
})
