/**
 * The schema-only compatibility check, `POST /admin/v1/namespaces/{ns}/tables/{t}/compatibility`
 * and `iceguard compatibility`, against the embedded catalog through a real iceguard: field ids
 * optional (matched by name within their struct, fresh ones above last-column-id), left-out
 * fields dropped, the verdict under the table's effective policy, and the CommitTableRequest it
 * answers is the one the gate then lets through (or refuses) on a real commit.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import { run } from '../../src/cli/main.js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { createFixtureTable, loadMeta, postJson, posts, type FieldJson, type Meta } from '../helpers/gate-fixtures.js'

interface Answer {
  compatible: boolean
  verdict: string
  findings: Array<{ rule: string, severity: string, 'field-id'?: number, path?: string }>
  request?: { identifier: unknown, requirements: Array<Record<string, unknown>>, updates: Array<Record<string, unknown>> }
  'schema-id': number
  'last-column-id': number
}

/** The fixture table's current fields with every id removed, as a person would write them. */
function withoutIds (meta: Meta): Array<Record<string, unknown>> {
  const strip = (type: unknown): unknown => {
    if (typeof type !== 'object' || type === null) return type
    const { 'element-id': _e, 'key-id': _k, 'value-id': _v, ...rest } = type as Record<string, unknown>
    if (Array.isArray(rest.fields)) rest.fields = (rest.fields as FieldJson[]).map(f => { const { id: _id, ...r } = f; return { ...r, type: strip(r.type) } })
    if (rest.element !== undefined) rest.element = strip(rest.element)
    if (rest.value !== undefined) rest.value = strip(rest.value)
    return rest
  }
  const schema = meta.schemas.find(s => s['schema-id'] === meta['current-schema-id'])!
  return (strip({ type: 'struct', fields: schema.fields }) as { fields: Array<Record<string, unknown>> }).fields
}

function idsByPath (schema: { fields: FieldJson[] }): Map<string, number> {
  const out = new Map<string, number>()
  const walk = (fields: FieldJson[], at: string): void => {
    for (const f of fields) {
      const path = at === '' ? f.name : `${at}.${f.name}`
      out.set(path, f.id)
      const type = f.type as { fields?: FieldJson[], 'element-id'?: number, 'key-id'?: number, 'value-id'?: number }
      if (typeof type === 'object' && type !== null) {
        if (Array.isArray(type.fields)) walk(type.fields, path)
        for (const k of ['element-id', 'key-id', 'value-id'] as const) if (type[k] !== undefined) out.set(`${path}.${k}`, type[k])
      }
    }
  }
  walk(schema.fields, '')
  return out
}

t.test('compatibility: a schema without ids, judged as the table\'s next schema', async t => {
  const dir = t.testdir({ 'policy.yaml': 'version: 1\nextends: builtin:recommended\nnamespaces:\n  strict:\n    rules:\n      COLUMN_NO_DROP: error\n' })
  const catalog = await startCatalog(t)
  const proxy = await startProxy(t, { upstream: catalog.url, policy: join(dir, 'policy.yaml') })
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['strict'] })
  await createFixtureTable(ice, 'orders', 2, 'strict')
  const meta = await loadMeta(proxy.url, 'strict', 'orders')
  const current = meta.schemas.find(s => s['schema-id'] === meta['current-schema-id'])!
  const url = `${proxy.url}/admin/v1/namespaces/strict/tables/orders/compatibility`
  const ask = async (fields: unknown[], extra: Record<string, unknown> = {}) => await postJson(url, { schema: { type: 'struct', fields, ...extra } })

  await t.test('an added column: compatible, ids matched by name, the new one above last-column-id', async t => {
    const fields = [...withoutIds(meta), { name: 'note', required: false, type: 'string', doc: 'free text' }]
    const res = await ask(fields)
    t.equal(res.status, 200, res.text)
    const body = res.json as Answer
    t.match(body, { compatible: true, verdict: 'allow', 'schema-id': 1, 'last-column-id': meta['last-column-id'] + 1 })
    const added = body.request!.updates[0] as { action: string, schema: { fields: FieldJson[] } }
    t.equal(added.action, 'add-schema')
    const before = idsByPath(current)
    const after = idsByPath(added.schema)
    for (const [path, id] of before) t.equal(after.get(path), id, `${path} keeps id ${id}`)
    t.equal(after.get('note'), meta['last-column-id'] + 1, 'the new column gets the next id')
    t.same(body.request!.requirements.map(r => r.type), ['assert-table-uuid', 'assert-last-assigned-field-id', 'assert-current-schema-id'])
    t.same(body.request!.identifier, { namespace: ['strict'], name: 'orders' })
  })

  await t.test('a left-out column is a drop, judged by the namespace\'s policy', async t => {
    const res = await ask(withoutIds(meta).filter(f => f.name !== 'price'))
    t.equal(res.status, 200)
    const body = res.json as Answer
    t.match(body, { compatible: false, verdict: 'deny' })
    t.match(body.findings, [{ rule: 'COLUMN_NO_DROP', severity: 'error', path: 'price', 'field-id': before('price') }])
  })

  await t.test('type changes are judged, not refused: a narrowing denies, a promotion passes', async t => {
    const retype = (type: string) => withoutIds(meta).map(f => f.name === 'qty' ? { ...f, type } : f)
    const narrowed = (await ask(retype('string'))).json as Answer
    t.match(narrowed, { compatible: false, verdict: 'deny', findings: [{ rule: 'TYPE_PROMOTION_VALID', 'field-id': before('qty') }] })
    const promoted = (await ask(retype('long'))).json as Answer
    t.equal(promoted.compatible, true, JSON.stringify(promoted.findings))
  })

  await t.test('an id given is identity: a new name on a known id is a rename', async t => {
    const fields = withoutIds(meta).map(f => f.name === 'name' ? { ...f, id: before('name'), name: 'customer_name' } : f)
    const body = (await ask(fields)).json as Answer
    t.match(body, { compatible: true, verdict: 'warn', findings: [{ rule: 'COLUMN_NO_RENAME', 'field-id': before('name') }] })
  })

  await t.test('the same schema: compatible, nothing to install', async t => {
    const body = (await ask(withoutIds(meta))).json as Answer
    t.match(body, { compatible: true, verdict: 'allow', 'schema-id': meta['current-schema-id'] })
    t.equal(body.request, undefined)
  })

  await t.test('bad input and unknown tables', async t => {
    const bad = await postJson(url, { schema: { type: 'struct', fields: [{ name: 'x', required: false, type: 'no-such-type' }] } })
    t.equal(bad.status, 400)
    t.match(bad.json, { error: { type: 'BadRequestException', code: 400, message: /^Invalid request: schema: .*no-such-type/ } })
    const noFields = await postJson(url, { schema: { type: 'struct' } })
    t.equal(noFields.status, 400)
    const missing = await postJson(`${proxy.url}/admin/v1/namespaces/strict/tables/nope/compatibility`, { schema: { fields: [] } })
    t.equal(missing.status, 404)
    t.match(missing.json, { error: { code: 404, type: 'NoSuchTableException' } })
  })

  await t.test('the request it answers is what the gate lets through on a real commit', async t => {
    const before = posts(catalog).length
    const denied = (await ask(withoutIds(meta).filter(f => f.name !== 'price'))).json as Answer
    const refused = await postJson(`${proxy.url}/v1/namespaces/strict/tables/orders`, denied.request)
    t.equal(refused.status, 400, 'not compatible: the gate refuses the very request')
    t.equal(posts(catalog).length, before, 'nothing reached the catalog')
    const ok = (await ask([...withoutIds(meta), { name: 'note', required: false, type: 'string', doc: 'free text' }])).json as Answer
    const committed = await postJson(`${proxy.url}/v1/namespaces/strict/tables/orders`, ok.request)
    t.equal(committed.status, 200, committed.text)
    const now = await loadMeta(proxy.url, 'strict', 'orders')
    t.equal(now['last-column-id'], meta['last-column-id'] + 1)
  })

  await t.test('iceguard compatibility: the same answer from the CLI', async t => {
    const latest = await loadMeta(proxy.url, 'strict', 'orders')
    writeFileSync(join(dir, 'same.json'), JSON.stringify({ type: 'struct', fields: withoutIds(latest) }))
    writeFileSync(join(dir, 'dropped.json'), JSON.stringify({ type: 'struct', fields: withoutIds(latest).filter(f => f.name !== 'qty') }))
    const cli = async (args: string[]) => {
      let out = ''
      let err = ''
      const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env: {}, cwd: dir }
      return { code: await run(['compatibility', '--url', proxy.url, ...args], io), out, err }
    }
    const same = await cli(['--table', 'strict.orders', 'same.json'])
    t.equal(same.code, EXIT.OK, same.err)
    t.match(same.out, /^strict\.orders: compatible \(verdict allow/)
    const dropped = await cli(['--table', 'strict.orders', 'dropped.json', '--format', 'json'])
    t.equal(dropped.code, EXIT.DENY)
    t.match(JSON.parse(dropped.out), { compatible: false, findings: [{ rule: 'COLUMN_NO_DROP', path: 'qty' }] })
    const unknown = await cli(['--table', 'strict.nope', 'same.json'])
    t.equal(unknown.code, EXIT.USAGE)
    t.match(unknown.err, /NoSuchTableException/)
    const noFile = await cli(['--table', 'strict.orders'])
    t.equal(noFile.code, EXIT.USAGE)
  })

  function before (path: string): number {
    return idsByPath(current).get(path) as number
  }
})
