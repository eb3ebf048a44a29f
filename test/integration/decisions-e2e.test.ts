/**
 * The decision log end to end over real HTTP: commits through iceguard (in front of the embedded
 * catalog) become stored decisions, listed and read through the admin API, on both transports
 * (a fresh connection the fast lane serves, and one warmed with GET /v1/config that node:http
 * serves). Decisions survive a restart (SQLite state folder); two iceguard instances sharing one
 * PostgreSQL see each other's decisions and revocations; a store that is down never blocks a
 * commit.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { Client, request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { startCatalog, startProxy, type RunningCatalog, type RunningProxy } from '../helpers/index.js'
import { cloneSchema, clientShapes, createFixtureTable, fieldByPath, loadMeta, posts } from '../helpers/gate-fixtures.js'
import { postgresSkip, startPostgres } from '../helpers/postgres.js'
import { metrics } from '../../src/metrics/iceguard-metrics.js'
import { mintOverride } from '../../src/policy/override-token.js'
import { run } from '../../src/cli/main.js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { counterValue } from '../helpers/metrics.js'

async function cli (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env, cwd: process.cwd() }
  const code = await run(args, io)
  return { code, out, err }
}

const ADMIN = 'admin-token-for-tests'
const SECRET = 'override-secret-for-tests-0123456789'
const env = { ICEGUARD_ADMIN_TOKEN: ADMIN, ICEGUARD_OVERRIDE_SECRET: SECRET }

const work = mkdtempSync(join(tmpdir(), 'iceguard-decisions-e2e-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))
const policy = join(work, 'policy.yaml')
writeFileSync(policy, 'version: 1\nextends: builtin:spec\ntables:\n  db.orders:\n    rules:\n      COLUMN_NO_DROP: error\n')

interface Json { status: number, json: any }

/** `anonymous`: send no admin token (admin reads and writes both need it once one is configured). */
async function call (url: string, opts: { method?: 'GET' | 'POST' | 'DELETE', body?: unknown, headers?: Record<string, string>, dispatcher?: Client, anonymous?: boolean } = {}): Promise<Json> {
  const admin = url.includes('/admin/') && opts.anonymous !== true ? { authorization: `Bearer ${ADMIN}` } : {}
  const res = await request(url, {
    method: opts.method ?? 'GET',
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...admin, ...opts.headers },
    ...(opts.dispatcher !== undefined ? { dispatcher: opts.dispatcher } : {})
  })
  const text = await res.body.text()
  return { status: res.statusCode, json: text === '' ? undefined : JSON.parse(text) }
}

/** Audit lines as the server writes them. */
function auditLines (): { stream: Writable, lines: any[] } {
  const lines: any[] = []
  const stream = new Writable({
    write (chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l))
      done()
    }
  })
  return { stream, lines }
}

async function setup (t: Test, catalog: RunningCatalog, url: string): Promise<void> {
  const ice = new IcebergRestCatalog({ baseUrl: url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 'orders', 2)
  t.ok(catalog.url !== '', 'catalog ready')
}

/** A schema commit dropping (or adding) a column of db.orders, as Java writes it. */
async function evolve (url: string, change: 'drop-qty' | 'add-note', dispatcher: Client, headers: Record<string, string> = {}): Promise<Json> {
  const meta = await loadMeta(url, 'db', 'orders')
  const s = cloneSchema(meta)
  if (change === 'drop-qty') s.fields = s.fields.filter(f => f.name !== 'qty')
  else s.fields.push({ id: Math.max(...s.fields.map(f => f.id), meta['last-column-id'] as number) + 1, name: `note${Date.now()}`, required: false, type: 'string' })
  return await call(`${url}/v1/namespaces/db/tables/orders`, { method: 'POST', body: clientShapes.java(meta, s, 'db', 'orders'), headers, dispatcher })
}

/** Two connections: a fresh one (the fast lane judges its commits) and one warmed with GET /v1/config (node:http). */
async function transports (t: Test, url: string): Promise<Record<'fast lane' | 'node:http', Client>> {
  const fresh = new Client(url, { pipelining: 1 })
  const warmed = new Client(url, { pipelining: 1 })
  t.teardown(async () => { await fresh.close(); await warmed.close() })
  t.equal((await call(`${url}/v1/config`, { dispatcher: warmed })).status, 200, 'the warmed connection sent GET /v1/config first')
  return { 'fast lane': fresh, 'node:http': warmed }
}

async function flushed (proxy: RunningProxy): Promise<void> {
  await proxy.app.decisions.log.flush()
}

t.test('SQLite: decisions of both transports are listed, filtered, read, and survive a restart', async t => {
  const catalog = await startCatalog(t)
  const state = join(work, 'state')
  const audit = auditLines()
  const proxy = await startProxy(t, { upstream: catalog.url, policy, 'state-dir': state, env, app: { logger: { level: 'info', stream: audit.stream } } })
  await setup(t, catalog, proxy.url)
  const conns = await transports(t, proxy.url)

  for (const [name, conn] of Object.entries(conns)) {
    const postsBefore = posts(catalog).length
    const denied = await evolve(proxy.url, 'drop-qty', conn)
    t.equal(denied.status, 400, `${name}: dropping qty is refused`)
    t.equal(posts(catalog).length, postsBefore, `${name}: nothing reached the upstream`)
    t.equal((await evolve(proxy.url, 'add-note', conn)).status, 200, `${name}: adding a column is forwarded`)
  }
  await flushed(proxy)

  const all = await call(`${proxy.url}/admin/v1/decisions`)
  t.equal(all.status, 200)
  const list = all.json.decisions as any[]
  t.same(list.map(d => d.verdict).slice(0, 4), ['allow', 'deny', 'allow', 'deny'], 'newest first: each transport\'s deny then allow')
  t.ok(list.some(d => d.kind === 'create-table' && d.table.name === 'orders'), 'the create is a decision too')
  const deny = list[1]
  t.match(deny, {
    table: { namespace: ['db'], name: 'orders' },
    kind: 'update-table',
    verdict: 'deny',
    principal: null,
    override: null,
    findings: [{ rule: 'COLUMN_NO_DROP', severity: 'error', 'field-id': 4, path: 'qty' }]
  }, 'the deny names the rule, field id and path')
  t.match(deny.changes, /dropped\s+4 qty/, 'and carries the schema diff summary')
  t.match(deny.time, /^\d{4}-\d{2}-\d{2}T/, 'time is RFC 3339')

  const line = audit.lines.find(l => l.audit?.verdict === 'deny')
  t.same(line.audit.decisionIds, [list.find(d => d['request-id'] === line.audit.requestId && d.verdict === 'deny').id], 'the audit line names the stored decision')
  t.equal(line.audit.decided, undefined, 'and leaves the findings to the store')

  const denies = await call(`${proxy.url}/admin/v1/decisions?verdict=deny&rule=COLUMN_NO_DROP&namespace=db&table=orders`)
  t.equal(denies.json.decisions.length, 2, 'filters combine: both denies')
  t.same((await call(`${proxy.url}/admin/v1/decisions?table=elsewhere`)).json, { decisions: [], 'next-page-token': null }, 'no match: an empty page')
  const since = encodeURIComponent(deny.time)
  t.ok((await call(`${proxy.url}/admin/v1/decisions?since=${since}`)).json.decisions.every((d: any) => d.time >= deny.time), 'since bounds the time')

  const paged: string[] = []
  let pageToken: string | null = null
  do {
    const page: Json = await call(`${proxy.url}/admin/v1/decisions?page-size=2${pageToken === null ? '' : `&page-token=${pageToken}`}`)
    paged.push(...page.json.decisions.map((d: any) => d.id))
    pageToken = page.json['next-page-token']
  } while (pageToken !== null)
  t.same(paged, list.map(d => d.id), 'pages of two give the same list')

  t.same((await call(`${proxy.url}/admin/v1/decisions/${deny.id}`)).json, deny, 'one decision by id')
  const missing = await call(`${proxy.url}/admin/v1/decisions/nope`)
  t.equal(missing.status, 404)
  t.match(missing.json, { error: { code: 404, type: 'NotFoundException', message: /decision nope/ } }, 'an unknown id is a 404 ErrorModel')
  const bad = await call(`${proxy.url}/admin/v1/decisions?since=yesterday`)
  t.match(bad, { status: 400, json: { error: { code: 400, message: /since/ } } }, 'a bad filter is a 400 naming it')
  t.match(await call(`${proxy.url}/admin/v1/decisions?page-token=xyz`), { status: 400, json: { error: { message: /page-token/ } } }, 'so is a bad page token')

  const listed = await cli(['decisions', '--url', proxy.url, '--verdict', 'deny', '--limit', '1'], { ICEGUARD_ADMIN_TOKEN: ADMIN })
  t.equal(listed.code, 0, 'iceguard decisions lists')
  t.equal(listed.out.split('\n').filter(l => /^\d{4}-/.test(l)).length, 1, 'as many as --limit asks')
  t.match(listed.out, new RegExp(`deny\\s+db\\.orders\\s+update-table\\s+-\\s+COLUMN_NO_DROP\\s+${list[0].verdict === 'deny' ? list[0].id : list[1].id}`), 'one line per decision: time, verdict, table, kind, principal, rules, id')
  t.match(listed.out, /error COLUMN_NO_DROP: Cannot drop/, 'then its findings')
  const asJson = await cli(['decisions', '--url', proxy.url, '--rule', 'COLUMN_NO_DROP', '--format', 'json'], { ICEGUARD_ADMIN_TOKEN: ADMIN })
  t.same(JSON.parse(asJson.out).decisions.map((d: any) => d.id), list.filter(d => d.verdict === 'deny').map(d => d.id), '--format json gives the API\'s records, following pages')

  const minted = await cli(['override', '--url', proxy.url, '--table', 'db.orders', '--rule', 'COLUMN_NO_DROP', '--ttl', '1h', '--reason', 'incident 7'], { ICEGUARD_ADMIN_TOKEN: ADMIN })
  t.equal(minted.code, 0, 'iceguard override --url mints on the server')
  const token = minted.out.trim()
  const allowed = await evolve(proxy.url, 'drop-qty', conns['node:http'], { 'x-iceguard-override': token })
  t.equal(allowed.status, 200, 'the minted token lets the drop through')
  const records = await cli(['override', '--url', proxy.url, '--list'], { ICEGUARD_ADMIN_TOKEN: ADMIN })
  t.match(records.out, /db\.orders\s+COLUMN_NO_DROP\s+expires \S+\s+admin-token\s+incident 7/, '--list shows its record')
  const id = records.out.split(/\s+/)[0] as string
  const revoked = await cli(['override', '--url', proxy.url, '--revoke', id], { ICEGUARD_ADMIN_TOKEN: ADMIN })
  t.same([revoked.code, revoked.out], [0, `revoked ${id}\n`], '--revoke revokes it')
  t.equal((await evolve(proxy.url, 'drop-qty', conns['fast lane'], { 'x-iceguard-override': token })).status, 400, 'and the gate refuses it from then on')
  const meta = await loadMeta(proxy.url, 'db', 'orders')
  const dropped = cloneSchema(meta)
  dropped.fields = dropped.fields.filter(f => f.name !== 'qty')
  const dryRun = await call(`${proxy.url}/admin/v1/validate`, {
    method: 'POST', headers: { 'x-iceguard-override': token }, body: { table: { namespace: ['db'], name: 'orders' }, request: clientShapes.java(meta, dropped, 'db', 'orders') }
  })
  t.match(dryRun, { status: 400, json: { error: { message: new RegExp(`${id} was revoked`) } } }, 'so does a dry run')
  const noAdmin = await cli(['override', '--url', proxy.url, '--revoke', id])
  t.equal(noAdmin.code, 3, 'without the admin token the server refuses')
  t.match(noAdmin.err, /NotAuthorizedException/, 'and the CLI says why')
  await flushed(proxy)
  const newest = (await call(`${proxy.url}/admin/v1/decisions?page-size=100`)).json.decisions as any[]

  await proxy.close()
  const again = await startProxy(t, { upstream: catalog.url, policy, 'state-dir': state, env })
  t.same((await call(`${again.url}/admin/v1/decisions?page-size=100`)).json.decisions, newest, 'a restarted iceguard lists the same decisions')
  t.match((await call(`${again.url}/admin/v1/overrides`)).json.overrides, [{ id, source: 'minted', 'revoked-at': /^\d{4}-/ }], 'and the same override records')
  const againConns = await transports(t, again.url)
  t.equal((await evolve(again.url, 'drop-qty', againConns['fast lane'], { 'x-iceguard-override': token })).status, 400, 'the revoked token stays refused after the restart')
})

t.test('a stored decision keeps every finding: an error beside a warning, and the errors an override waived', async t => {
  const catalog = await startCatalog(t)
  const warned = join(work, 'policy-warned.yaml')
  writeFileSync(warned, 'version: 1\nextends: builtin:spec\ntables:\n  db.orders:\n    rules:\n      COLUMN_NO_DROP: error\n      COLUMN_NO_RENAME: warn\n')
  const proxy = await startProxy(t, { upstream: catalog.url, policy: warned, 'state-dir': join(work, 'state-findings'), env })
  await setup(t, catalog, proxy.url)
  const conns = await transports(t, proxy.url)
  const token = mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'incident 8', secret: SECRET })

  const expected: Array<{ verdict: string, findings: Array<{ rule: string, severity: string, path: string }> }> = []
  const columns = { 'fast lane': { dropped: 'qty', renamed: 'price' }, 'node:http': { dropped: 'tags', renamed: 'attrs' } }
  for (const [name, conn] of Object.entries(conns)) {
    const { dropped, renamed } = columns[name as keyof typeof columns]
    // One commit, two findings: dropping a column is an error here, renaming one a warning.
    const meta = await loadMeta(proxy.url, 'db', 'orders')
    const s = cloneSchema(meta)
    s.fields = s.fields.filter(f => f.name !== dropped)
    fieldByPath(s, renamed).name = `${renamed}_renamed`
    const body = clientShapes.java(meta, s, 'db', 'orders')
    const before = posts(catalog).length
    const denied = await call(`${proxy.url}/v1/namespaces/db/tables/orders`, { method: 'POST', body, dispatcher: conn })
    t.equal(denied.status, 400, `${name}: the drop is refused`)
    t.equal(posts(catalog).length, before, `${name}: nothing reached the upstream`)
    const waived = await call(`${proxy.url}/v1/namespaces/db/tables/orders`, { method: 'POST', body, dispatcher: conn, headers: { 'x-iceguard-override': token } })
    t.equal(waived.status, 200, `${name}: the break-glass token lets the same commit through`)
    expected.push(
      { verdict: 'deny', findings: [{ rule: 'COLUMN_NO_DROP', severity: 'error', path: dropped }, { rule: 'COLUMN_NO_RENAME', severity: 'warn', path: renamed }] },
      { verdict: 'warn', findings: [{ rule: 'COLUMN_NO_DROP', severity: 'warn', path: dropped }, { rule: 'COLUMN_NO_RENAME', severity: 'warn', path: renamed }] })
  }
  await flushed(proxy)

  const listed = (await call(`${proxy.url}/admin/v1/decisions?namespace=db&table=orders&page-size=100`)).json.decisions as any[]
  const updates = listed.filter(d => d.kind === 'update-table').reverse()
  t.same(updates.map(d => d.verdict), expected.map(e => e.verdict), 'one decision per commit, oldest first: deny, then the override\'s warn, on each transport')
  const byRule = (findings: any[]): any[] => findings.map(f => ({ rule: f.rule, severity: f.severity, path: f.path })).sort((a, b) => a.rule.localeCompare(b.rule))
  for (const [i, d] of updates.entries()) {
    const read = await call(`${proxy.url}/admin/v1/decisions/${d.id}`)
    t.equal(read.status, 200)
    t.same(byRule(read.json.findings), expected[i]!.findings, `${d.verdict}: every finding, warnings included, read back by id`)
    t.ok(read.json.findings.every((f: any) => typeof f.message === 'string' && f.message !== '' && typeof f['field-id'] === 'number'), 'each with its message and field id')
    if (d.verdict === 'warn') {
      t.match(read.json.override, { id: String, rules: ['COLUMN_NO_DROP'] }, 'the override that waived the error is named beside the finding it waived')
    } else {
      t.equal(read.json.override, null, 'a deny names no override')
    }
  }
})

t.test('a decision store that is down never blocks a commit', async t => {
  const catalog = await startCatalog(t)
  const audit = auditLines()
  // Nothing listens on port 1.
  const proxy = await startProxy(t, { upstream: catalog.url, policy, 'database-url': 'postgres://nobody@127.0.0.1:1/none', env, app: { logger: { level: 'info', stream: audit.stream } } })
  await setup(t, catalog, proxy.url)
  const failedBefore = await counterValue(metrics.decisionStore, { outcome: 'failed' })
  const conns = await transports(t, proxy.url)
  t.equal((await evolve(proxy.url, 'add-note', conns['node:http'])).status, 200, 'the commit is forwarded')
  t.equal((await evolve(proxy.url, 'drop-qty', conns['fast lane'])).status, 400, 'and a violation refused, as always')
  await flushed(proxy)
  t.ok(await counterValue(metrics.decisionStore, { outcome: 'failed' }) > failedBefore, 'the failed write is counted')
  t.ok(proxy.app.decisions.log.pending > 0, 'the decisions wait in the buffer for a retry')
  t.ok(audit.lines.some(l => /Cannot store decisions/.test(l.msg)), 'and the outage is logged')
  const answer = await call(`${proxy.url}/admin/v1/decisions`)
  t.match(answer, { status: 503, json: { error: { code: 503, type: 'ServiceUnavailableException', message: /decision store is unavailable/ } } }, 'the admin API says the store is unavailable')
})

t.test('PostgreSQL: two iceguards share decisions and override revocations', { skip: postgresSkip }, async t => {
  const pgServer = await startPostgres(t)
  if (pgServer === undefined) return
  const catalog = await startCatalog(t)
  const a = await startProxy(t, { upstream: catalog.url, policy, 'database-url': pgServer.url, env })
  const b = await startProxy(t, { upstream: catalog.url, policy, 'database-url': pgServer.url, env })
  await setup(t, catalog, a.url)
  const conns = await transports(t, a.url)

  t.equal((await evolve(a.url, 'drop-qty', conns['fast lane'])).status, 400, 'A refuses the drop')
  await flushed(a)
  const seenAtB = await call(`${b.url}/admin/v1/decisions?verdict=deny`)
  t.match(seenAtB.json.decisions, [{ table: { name: 'orders' }, findings: [{ rule: 'COLUMN_NO_DROP' }] }], 'B lists the decision A made')

  t.equal((await call(`${b.url}/admin/v1/decisions`, { anonymous: true })).status, 401, 'reading decisions needs the admin token')
  const refused = await call(`${b.url}/admin/v1/overrides`, { method: 'POST', anonymous: true, body: { table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttl: '1h', reason: 'incident 42' } })
  t.equal(refused.status, 401, 'minting needs the admin token')
  const minted = await call(`${b.url}/admin/v1/overrides`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: { table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttl: '1h', reason: 'incident 42' }
  })
  t.equal(minted.status, 201, 'B mints a token')
  const id = minted.json.override.id
  t.match(minted.json.override, { table: 'db.orders', rules: ['COLUMN_NO_DROP'], reason: 'incident 42', source: 'minted', 'revoked-at': null, 'minted-by': 'admin-token' }, 'its record')
  t.match((await call(`${a.url}/admin/v1/overrides?active=true`)).json.overrides, [{ id }], 'A lists it as active')
  const consolePage = async (): Promise<string> => {
    const res = await request(`${a.url}/console/tables/db/orders`, { headers: { authorization: `Bearer ${ADMIN}` } })
    return await res.body.text()
  }
  const inForce = await consolePage()
  t.ok(inForce.includes(id) && inForce.includes('incident 42'), 'and A\'s console shows it in force on the table page')

  const headers = { 'x-iceguard-override': minted.json.token }
  const used = await evolve(a.url, 'drop-qty', conns['node:http'], headers)
  t.equal(used.status, 200, 'A accepts the token: the drop is let through')
  await flushed(a)
  t.match((await call(`${b.url}/admin/v1/decisions?verdict=warn`)).json.decisions[0], { override: { id, rules: ['COLUMN_NO_DROP'] } }, 'the decision records the override used')

  t.equal((await call(`${b.url}/admin/v1/overrides/${id}`, { method: 'DELETE', anonymous: true })).status, 401, 'revoking needs the admin token')
  const revoked = await call(`${b.url}/admin/v1/overrides/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } })
  t.match(revoked, { status: 200, json: { id, 'revoked-at': /^\d{4}-/ } }, 'B revokes it')
  t.notOk((await consolePage()).includes(id), 'A\'s console no longer shows it in force')
  t.equal((await evolve(b.url, 'drop-qty', conns['fast lane'], headers)).status, 400, 'B refuses it at once')
  // A learns from the shared store on its own periodic refresh (every two seconds).
  while (!a.app.decisions.revocations.isRevoked(id)) await new Promise(resolve => setTimeout(resolve, 100))
  const postsBefore = posts(catalog).length
  for (const [name, conn] of Object.entries(conns)) {
    const after = await evolve(a.url, 'drop-qty', conn, headers)
    t.equal(after.status, 400, `${name}: A refuses the revoked token`)
    t.match(after.json.error.message, new RegExp(`${id} was revoked`), `${name}: and says so`)
  }
  t.equal(posts(catalog).length, postsBefore, 'nothing reached the upstream')
  t.match((await call(`${a.url}/admin/v1/overrides`)).json.overrides, [{ id, 'revoked-by': 'admin-token' }], 'A lists it as revoked')
})

t.test('a write refused before judging keeps its table identity: a dot inside one namespace level stays inside it', async t => {
  const catalog = await startCatalog(t)
  const proxy = await startProxy(t, { upstream: catalog.url, policy, 'state-dir': join(work, 'state-dotted'), env })
  const conns = await transports(t, proxy.url)
  const before = posts(catalog).length
  for (const [name, conn] of Object.entries(conns)) {
    // One namespace level `a.b` (levels would be joined by %1F), a body whose identifier names another table.
    const body = {
      identifier: { namespace: ['a'], name: 'b.t' },
      requirements: [],
      updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: [{ id: 1, name: 'x', required: false, type: 'int' }] } }]
    }
    const res = await call(`${proxy.url}/v1/namespaces/a.b/tables/t`, { method: 'POST', body, dispatcher: conn })
    t.equal(res.status, 400, `${name}: refused before judging`)
    t.match(res.json, { error: { code: 400, message: /identifier names a\.b\.t, not the table in the request path/ } }, `${name}: the message names the mismatch`)
  }
  t.equal(posts(catalog).length, before, 'nothing reached the upstream')
  await flushed(proxy)
  const stored = (await call(`${proxy.url}/admin/v1/decisions?table=t`)).json.decisions as any[]
  const mine = stored.filter(d => d.kind === 'update-table')
  t.equal(mine.length, 2, 'one decision per transport')
  for (const d of mine) t.same(d.table, { namespace: ['a.b'], name: 't' }, 'namespace ["a.b"]: one level, not split at the dot')
})
