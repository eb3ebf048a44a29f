import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { findingLine } from '../../src/engine/decide.js'
import { startCatalog, startProxy, startRecordingUpstream, jsonResponder, type ProxyOptions } from '../helpers/index.js'

const SCHEMA = {
  type: 'struct',
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'customer', required: false, type: 'string' },
    { id: 3, name: 'quantity', required: false, type: 'int' }
  ]
}

function evolve (fields: unknown[], schemaId: number, currentSchemaId = schemaId - 1): Record<string, unknown> {
  return {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': currentSchemaId }],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': schemaId, 'identifier-field-ids': [1], fields } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }
}

const ID = { id: 1, name: 'id', required: true, type: 'long' }
const CUSTOMER = { id: 2, name: 'customer', required: false, type: 'string' }
const QUANTITY = { id: 3, name: 'quantity', required: false, type: 'int' }

/** The suite's server has an admin token, so every admin call needs it; pass `{}` to call without. */
const ADMIN = { authorization: 'Bearer admin-secret' }
const defaultHeaders = (url: string): Record<string, string> => url.includes('/admin/') ? ADMIN : {}

async function post (url: string, body: unknown, headers: Record<string, string> = defaultHeaders(url)): Promise<{ status: number, headers: Headers, json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: text === '' ? undefined : JSON.parse(text) }
}

async function get (url: string, headers: Record<string, string> = defaultHeaders(url)): Promise<{ status: number, headers: Headers, json: any, text: string }> {
  const res = await fetch(url, { headers })
  const text = await res.text()
  let json: unknown
  try { json = JSON.parse(text) } catch {}
  return { status: res.status, headers: res.headers, json, text }
}

function isErrorModel (t: Test, body: any, code: number, message?: RegExp): void {
  t.equal(body?.error?.code, code, `ErrorModel code ${code}`)
  t.type(body?.error?.type, 'string')
  t.type(body?.error?.message, 'string')
  if (message !== undefined) t.match(body.error.message, message)
}

t.test('admin API over HTTP against the embedded catalog', async (t) => {
  const catalog = await startCatalog(t)
  const policy = new URL('../fixtures/cli/policy.yaml', import.meta.url).pathname
  // The options type's index signature does not admit `env` beside the flags; the helper reads it apart.
  const proxy = await startProxy(t, { upstream: catalog.url, policy, env: { ICEGUARD_ADMIN_TOKEN: 'admin-secret' } } as unknown as ProxyOptions)
  const v1 = `${proxy.url}/v1`
  const admin = `${proxy.url}/admin/v1`

  t.equal((await post(`${v1}/namespaces`, { namespace: ['db'], properties: {} })).status, 200)
  // The tables predate the policy (db.orders does not meet its contract): created at the catalog itself.
  t.equal((await post(`${catalog.url}/v1/namespaces/db/tables`, { name: 'orders', schema: SCHEMA })).status, 200)
  t.equal((await post(`${catalog.url}/v1/namespaces/db/tables`, { name: 'events', schema: SCHEMA })).status, 200)

  await t.test('validate and a real commit agree (same request, same base)', async (t) => {
    const cases: Array<{ name: string, request: Record<string, unknown>, verdict: string, status: number }> = [
      { name: 'narrowing', request: evolve([ID, CUSTOMER, { ...QUANTITY, type: 'string' }], 1), verdict: 'deny', status: 400 },
      { name: 'drop (an error on db.*) and contract', request: evolve([ID, QUANTITY], 1), verdict: 'deny', status: 400 },
      { name: 'stale base', request: evolve([ID, CUSTOMER, { ...QUANTITY, type: 'long' }], 1, 5), verdict: 'conflict', status: 409 },
      { name: 'promotion', request: evolve([ID, CUSTOMER, { ...QUANTITY, type: 'long' }], 1), verdict: 'allow', status: 200 }
    ]
    for (const c of cases) {
      const dry = await post(`${admin}/validate`, { table: { namespace: ['db'], name: 'events' }, request: c.request })
      t.equal(dry.status, 200, `${c.name}: validate answers`)
      t.equal(dry.json.verdict, c.verdict, `${c.name}: validate verdict`)
      const real = await post(`${v1}/namespaces/db/tables/events`, c.request)
      t.equal(real.status, c.status, `${c.name}: the commit's status matches the verdict`)
      if (c.verdict === 'deny') {
        const lines = dry.json.findings.filter((f: any) => f.severity === 'error').map((f: any) => findingLine({
          rule: f.rule, severity: f.severity, message: f.message, fieldId: f['field-id'], path: f.path, oldType: f['old-type'], newType: f['new-type']
        }))
        t.same(real.json.error.stack, lines, `${c.name}: the same findings, line for line`)
      }
      if (c.verdict === 'conflict') t.match(real.json.error.message, /current schema changed/)
    }
    const history = await get(`${admin}/namespaces/db/tables/events/schemas`)
    t.equal(history.json.schemas.length, 2, 'only the allowed commit landed')
  })

  await t.test('validate offline with metadata: nothing is loaded, 64-bit ids compare exactly', async (t) => {
    const before = catalog.requests.length
    const metadata = readFileSync(new URL('../fixtures/cli/table-metadata.json', import.meta.url), 'utf8')
    const request = readFileSync(new URL('../fixtures/cli/add-optional-column.json', import.meta.url), 'utf8')
    // Sent as text so 3055729675574597004 arrives with every digit.
    const body = `{"metadata": ${metadata}, "request": ${request}}`
    const ok = await post(`${admin}/validate`, body)
    t.equal(ok.status, 200)
    t.equal(ok.json.verdict, 'allow', 'assert-ref-snapshot-id holds against the exact snapshot id')
    t.same(ok.json.table, { namespace: ['db'], name: 'orders' })
    t.equal(catalog.requests.length, before, 'the upstream saw nothing')
    const off = await post(`${admin}/validate`, body.replace('"snapshot-id": 3055729675574597004 }\n  ]', '"snapshot-id": 3055729675574597005 }\n  ]'))
    t.equal(off.json.verdict, 'conflict', 'one digit off is a different snapshot')
  })

  await t.test('validate a transaction: worst verdict, per-table results', async (t) => {
    const change = (name: string, r: Record<string, unknown>) => ({ identifier: { namespace: ['db'], name }, ...r })
    const res = await post(`${admin}/validate`, {
      request: { 'table-changes': [change('orders', evolve([ID, CUSTOMER, QUANTITY, { id: 4, name: 'note', required: false, type: 'string' }], 1)), change('events', evolve([ID, CUSTOMER], 2))] }
    })
    t.equal(res.status, 200)
    t.equal(res.json.verdict, 'deny')
    t.same(res.json.tables.map((x: any) => x.table.name), ['orders', 'events'])
    t.not(res.json.tables[0].verdict, 'deny', 'adding an optional column is not refused')
    t.equal(res.json.tables[1].verdict, 'deny', 'dropping a column on db.* is')
  })

  await t.test('validate reads the table identifier as the gate does: by levels, a null identifier is absent', async (t) => {
    const request = evolve([ID, CUSTOMER, QUANTITY, { id: 5, name: 'memo', required: false, type: 'string' }], 1)
    // "a" + "b.t" and "a.b" + "t" print alike as dotted names but are different tables.
    const levels = await post(`${admin}/validate`, {
      table: { namespace: ['a'], name: 'b.t' },
      request: { ...request, identifier: { namespace: ['a', 'b'], name: 't' } }
    })
    t.equal(levels.status, 400, 'a table that differs by its levels is refused')
    isErrorModel(t, levels.json, 400, /table names .* but request\.identifier names/)
    const same = await post(`${admin}/validate`, {
      table: { namespace: ['db'], name: 'orders' },
      request: { ...request, identifier: { namespace: ['db'], name: 'orders' } }
    })
    t.equal(same.status, 200, 'the same table named twice is judged')
    t.same(same.json.table, { namespace: ['db'], name: 'orders' })
    const nullId = await post(`${admin}/validate`, { table: { namespace: ['db'], name: 'orders' }, request: { ...request, identifier: null } })
    t.equal(nullId.status, 200, 'a null request.identifier reads as absent (Java writes nulls)')
    t.same(nullId.json.table, { namespace: ['db'], name: 'orders' })
    const unnamed = await post(`${admin}/validate`, { table: { namespace: ['db'], name: '' }, request })
    t.equal(unnamed.status, 400, 'an empty table name is refused')
    isErrorModel(t, unnamed.json, 400, /table\.name/)
  })

  await t.test('validate: bad input is a 400 ErrorModel naming the field', async (t) => {
    const cases: Array<[unknown, RegExp]> = [
      [{ request: { updates: [] } }, /body\.request must have property "requirements"/],
      [{ table: { namespace: 'db', name: 'orders' }, request: { requirements: [], updates: [] } }, /body\.table\.namespace must be array/],
      [{ request: { requirements: [], updates: [] } }, /name the table/],
      [{ request: { requirements: [], updates: [] }, table: { namespace: ['db'], name: 'orders' }, extra: 1 }, /unknown property "extra"/],
      [{ table: { namespace: ['db'], name: 'orders' }, request: { requirements: [], updates: [] }, metadata: { 'format-version': 9 } }, /format-version/],
      ['{"request": ', /Cannot read request body: invalid JSON/],
      ['{"request": {}, "request": {}}', /duplicate key "request"/]
    ]
    for (const [body, message] of cases) {
      const res = await post(`${admin}/validate`, body)
      t.equal(res.status, 400, String(message))
      isErrorModel(t, res.json, 400, message)
    }
    const unknown = await post(`${admin}/validate`, { table: { namespace: ['db'], name: 'nope' }, request: evolve([ID], 1) })
    t.equal(unknown.status, 404, 'unknown table: the upstream\'s 404')
    isErrorModel(t, unknown.json, 404)
  })

  await t.test('diff: two schemas, or a table and two schema ids', async (t) => {
    const res = await post(`${admin}/diff`, { from: SCHEMA, to: { ...SCHEMA, fields: [ID, { ...CUSTOMER, name: 'buyer' }, QUANTITY] } })
    t.equal(res.status, 200)
    t.same(res.json.changes, [{ kind: 'field-renamed', 'field-id': 2, path: 'buyer', 'old-path': 'customer', 'old-name': 'customer', 'new-name': 'buyer' }])
    t.match(res.json.summary, /customer -> buyer/)
    const byIds = await post(`${admin}/diff`, { table: { namespace: ['db'], name: 'events' }, 'from-schema-id': 0 })
    t.equal(byIds.status, 200)
    t.equal(byIds.json['to-schema-id'], 1, 'defaults to the current schema')
    t.match(byIds.json.changes[0], { kind: 'type-changed', 'field-id': 3, from: 'int', to: 'long' })
    const missing = await post(`${admin}/diff`, { table: { namespace: ['db'], name: 'events' }, 'from-schema-id': 9 })
    isErrorModel(t, missing.json, 400, /has no schema 9/)
    isErrorModel(t, (await post(`${admin}/diff`, { from: SCHEMA })).json, 400, /give from and to/)
    isErrorModel(t, (await post(`${admin}/diff`, { from: { type: 'struct', fields: [{ id: 1, name: 'x', required: true, type: 'lung' }] }, to: SCHEMA })).json, 400, /lung/)
    const unknown = await post(`${admin}/diff`, { table: { namespace: ['db'], name: 'nope' }, 'from-schema-id': 0 })
    t.equal(unknown.status, 404)
  })

  await t.test('schema history: diffs, lineage by id, names left behind', async (t) => {
    // Evolved at the catalog itself: history shows what is there, however it got there.
    // 0 → rename customer→buyer (1) → drop buyer, add a new customer with id 4 (2).
    t.equal((await post(`${catalog.url}/v1/namespaces/db/tables`, { name: 'history', schema: SCHEMA })).status, 200)
    t.equal((await post(`${catalog.url}/v1/namespaces/db/tables/history`, evolve([ID, { ...CUSTOMER, name: 'buyer' }, QUANTITY], 1))).status, 200)
    t.equal((await post(`${catalog.url}/v1/namespaces/db/tables/history`, evolve([ID, QUANTITY, { id: 4, name: 'customer', required: false, type: 'string' }], 2))).status, 200)
    const h = await get(`${admin}/namespaces/db/tables/history/schemas`)
    t.equal(h.status, 200)
    t.equal(h.json['current-schema-id'], 2)
    t.same(h.json.schemas.map((s: any) => [s['schema-id'], s.current, s.changes.map((c: any) => c.kind).sort()]),
      [[0, false, []], [1, false, ['field-renamed']], [2, true, ['field-added', 'field-dropped']]])
    const old = h.json.lineage.find((l: any) => l['field-id'] === 2)
    t.same(old.names, ['customer', 'buyer'], 'every name the id had')
    t.match(old, { 'added-in-schema-id': 0, 'dropped-in-schema-id': 2, 'in-current-schema': false })
    const fresh = h.json.lineage.find((l: any) => l['field-id'] === 4)
    t.match(fresh, { names: ['customer'], 'added-in-schema-id': 2, 'in-current-schema': true })
    t.same(h.json['dropped-names'], [{ name: 'buyer', 'field-id': 2, 'dropped-in-schema-id': 2 }])
    const nested = await get(`${admin}/namespaces/db%1Fnope/tables/orders/schemas`)
    t.equal(nested.status, 404, 'unknown namespace: 404 relayed')
    isErrorModel(t, nested.json, 404)
  })

  await t.test('contract: report with every violation; 404 without one', async (t) => {
    const res = await get(`${admin}/namespaces/db/tables/orders/contract`)
    t.equal(res.status, 200)
    t.equal(res.json['meets-contract'], false)
    t.same(res.json.violations.map((v: any) => [v.kind, v.path]), [['missing', 'total']])
    t.match(res.json.columns, [{ name: 'id', type: 'long', required: true }, { name: 'customer', type: 'string' }, { name: 'total', type: 'decimal(12, 2)' }])
    t.equal(res.json['schema-id'], 0)
    const none = await get(`${admin}/namespaces/db/tables/events/contract`)
    t.equal(none.status, 404)
    isErrorModel(t, none.json, 404, /No contract applies to table db\.events/)
    t.equal((await get(`${admin}/namespaces/db/tables/nope/contract`)).status, 404)
  })

  await t.test('rules, effective policy, reload', async (t) => {
    const rules = await get(`${admin}/rules`)
    t.equal(rules.status, 200)
    const drop = rules.json.rules.find((r: any) => r.id === 'COLUMN_NO_DROP')
    t.match(drop, { category: 'platform', doc: '/rules/COLUMN_NO_DROP' })
    const eff = await get(`${admin}/policy/effective?table=db.orders`)
    t.equal(eff.status, 200)
    t.match(eff.json.rules.find((r: any) => r.rule === 'COLUMN_NO_DROP'), { severity: 'error', source: 'namespace:db' })
    t.match(eff.json.contract, { strict: false, columns: 3 })
    isErrorModel(t, (await get(`${admin}/policy/effective?table=orders`)).json, 400, /namespace\.table/)
    isErrorModel(t, (await get(`${admin}/policy/effective`)).json, 400, /querystring must have property "table"/)

    const anon = await post(`${admin}/policy/reload`, '', {})
    t.equal(anon.status, 401)
    t.equal(anon.headers.get('www-authenticate'), 'Bearer realm="iceguard-admin"')
    isErrorModel(t, anon.json, 401)
    // RFC 6750 §3.1: a token that does not verify is invalid_token, 401.
    const wrong = await post(`${admin}/policy/reload`, '', { authorization: 'Bearer admin-secreT' })
    t.equal(wrong.status, 401)
    t.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="iceguard-admin", error="invalid_token"')
    isErrorModel(t, wrong.json, 401, /not valid/)
    const ok = await post(`${admin}/policy/reload`, '', { authorization: 'Bearer admin-secret' })
    t.equal(ok.status, 200)
    t.match(ok.json, { reloaded: true, scopes: 4 })
  })

  await t.test('health, readiness and metrics', async (t) => {
    t.same((await get(`${proxy.url}/healthz`)).json, { status: 'ok' })
    t.match((await get(`${proxy.url}/readyz`)).json, { status: 'ready' })
    t.equal((await get(`${v1}/namespaces`)).status, 200)
    const m = await get(`${proxy.url}/metrics`)
    t.match(m.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
    t.match(m.text, /iceguard_http_requests_total\{method="POST",route="\/admin\/v1\/validate",status="200"\} \d+/)
    t.match(m.text, /iceguard_decisions_total\{source="commit",verdict="deny"\} \d+/)
    t.match(m.text, /iceguard_decisions_total\{source="dry-run",verdict="allow"\} \d+/)
    t.match(m.text, /iceguard_findings_total\{rule="TYPE_PROMOTION_VALID",severity="error",source="commit"\} \d+/)
    t.match(m.text, /iceguard_upstream_request_duration_seconds_bucket\{method="GET",status="200",le="\+Inf"\} \d+/)
    t.match(m.text, /iceguard_base_loads_total\{outcome="loaded"\} \d+/)
    t.match(m.text, /iceguard_http_requests_total\{method="GET",route="iceberg:passthrough",status="200"\} \d+/, 'streamed pass-through calls are counted too')
  })
})

t.test('the upstream refuses the caller: 401/403 relayed, credentials forwarded', async (t) => {
  const stub = await startRecordingUpstream(t, (req, res) => {
    if (req.url.startsWith('/v1/config')) return jsonResponder(200, { defaults: {}, overrides: {} })(req, res)
    const auth = req.headers.authorization
    if (auth === undefined) return jsonResponder(401, { error: { message: 'Not authorized: no token', type: 'NotAuthorizedException', code: 401 } }, { 'www-authenticate': 'Bearer' })(req, res)
    return jsonResponder(403, { error: { message: 'Forbidden: alice may not read db.orders', type: 'ForbiddenException', code: 403 } })(req, res)
  })
  const proxy = await startProxy(t, { upstream: stub.url })
  const admin = `${proxy.url}/admin/v1`
  for (const [path, method] of [['/namespaces/db/tables/orders/schemas', 'GET'], ['/namespaces/db/tables/orders/contract', 'GET'], ['/validate', 'POST'], ['/diff', 'POST']] as const) {
    const body = path === '/validate'
      ? { table: { namespace: ['db'], name: 'orders' }, request: evolve([ID], 1) }
      : { table: { namespace: ['db'], name: 'orders' }, 'from-schema-id': 0 }
    const send = (headers: Record<string, string>) => method === 'GET' ? get(`${admin}${path}`, headers) : post(`${admin}${path}`, body, headers)
    const anon = await send({})
    t.equal(anon.status, 401, `${path}: 401 relayed`)
    t.same(anon.json, { error: { message: 'Not authorized: no token', type: 'NotAuthorizedException', code: 401 } })
    t.equal(anon.headers.get('www-authenticate'), 'Bearer')
    const alice = await send({ authorization: 'Bearer alice-token' })
    t.equal(alice.status, 403, `${path}: 403 relayed`)
    t.match(alice.json.error.message, /alice may not read/)
  }
  const load = stub.requests.find(r => r.headers.authorization === 'Bearer alice-token')
  t.match(load?.url, /^\/v1\/namespaces\/db\/tables\/orders\?snapshots=refs$/, 'the table was read as the caller')
  t.notOk(stub.requests.some(r => r.method === 'POST'), 'nothing was ever forwarded')
})

t.test('readiness fails when the upstream cannot be reached', async (t) => {
  const stub = await startRecordingUpstream(t)
  const url = stub.url
  await stub.close()
  const proxy = await startProxy(t, { upstream: url, 'upstream-connect-timeout': '500' })
  const res = await get(`${proxy.url}/readyz`)
  t.equal(res.status, 503)
  isErrorModel(t, res.json, 503, /Not ready: the upstream catalog did not answer GET \/v1\/config/)
  t.same((await get(`${proxy.url}/healthz`)).json, { status: 'ok' }, 'liveness does not depend on the upstream')
})
