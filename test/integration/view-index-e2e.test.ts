/**
 * The view index end to end on the embedded catalog over real HTTP, on every transport: views
 * created over REST through iceguard are indexed; `…/dependents` lists them with the columns they
 * read; a rename of a read column is refused under `error` (nothing reaches the catalog) and
 * warned under `warn`; an unrelated column is renamed freely; a table drop is reported and logged
 * as a decision; a view written after a rename is reported; the crawl finds views written around
 * iceguard. No view SQL reaches a log line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { captureLogLines } from '../helpers/log-lines.js'
import { request } from 'undici'
import type { CliIo } from '../../src/cli/cli-io.js'
import { run } from '../../src/cli/main.js'
import { loggerOptions } from '../../src/main/app.js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { postJson } from '../helpers/gate-fixtures.js'
import { onEveryTransport } from '../helpers/transports.js'

const work = mkdtempSync(join(tmpdir(), 'iceguard-views-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))
const policy = join(work, 'policy.yaml')
writeFileSync(policy, [
  'version: 1',
  'extends: builtin:recommended',
  'tables:',
  '  sales.strict:',
  '    rules:',
  '      VIEW_REFERENCES_COLUMN: error',
  ''
].join('\n'))

const SECRET_SQL_MARK = 'zz_private_predicate'

interface Field { id: number, name: string, required: boolean, type: string }
const FIELDS: Field[] = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'amount', required: false, type: 'double' },
  { id: 3, name: 'note', required: false, type: 'string' }
]

function createTable (name: string): unknown {
  return { name, schema: { type: 'struct', 'schema-id': 0, fields: FIELDS } }
}

/** A commit renaming field `id` to `to`, on the table's current schema `current` (ids kept). */
function rename (current: Field[], schemaId: number, fieldId: number, to: string): { body: unknown, fields: Field[] } {
  const fields = current.map(f => f.id === fieldId ? { ...f, name: to } : f)
  return {
    fields,
    body: {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': schemaId }],
      updates: [
        { action: 'add-schema', schema: { type: 'struct', 'schema-id': schemaId + 1, fields } },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
    }
  }
}

function createView (name: string, sql: string, dialect = 'spark'): unknown {
  return {
    name,
    schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    'view-version': {
      'version-id': 1,
      'timestamp-ms': 1717171717000,
      'schema-id': 0,
      summary: { 'engine-name': dialect },
      'default-namespace': ['sales'],
      representations: [{ type: 'sql', sql, dialect }]
    },
    properties: {}
  }
}

async function getJson (url: string): Promise<{ status: number, json: any }> {
  const res = await request(url)
  const text = await res.body.text()
  return { status: res.statusCode, json: text === '' ? undefined : JSON.parse(text) }
}

onEveryTransport(t, t => {
  t.test('views created over REST guard the columns they read', async t => {
    const catalog = await startCatalog(t)
    const log = captureLogLines()
    const proxy = await startProxy(t, { upstream: catalog.url, policy, app: { logger: { ...loggerOptions({ logLevel: 'trace' }) as object, stream: log.stream } } })
    const v1 = `${proxy.url}/v1/namespaces`
    t.equal((await postJson(v1, { namespace: ['sales'] })).status, 200)
    for (const name of ['orders', 'strict']) t.equal((await postJson(`${v1}/sales/tables`, createTable(name))).status, 200, `table ${name} created`)

    const created = await postJson(`${v1}/sales/views`, createView('order_amounts', `SELECT o.id, o.amount FROM orders o WHERE o.note <> '${SECRET_SQL_MARK}'`))
    t.equal(created.status, 200, created.text)
    t.equal((await postJson(`${v1}/sales/views`, createView('strict_amounts', 'SELECT "id", "amount" FROM "sales"."strict"', 'trino'))).status, 200)

    const deps = await getJson(`${proxy.url}/admin/v1/namespaces/sales/tables/orders/dependents`)
    t.equal(deps.status, 200)
    t.same(deps.json.views, [{
      identifier: { namespace: ['sales'], name: 'order_amounts' },
      dialects: ['spark'],
      columns: [{ 'field-id': 1, name: 'id' }, { 'field-id': 2, name: 'amount' }, { 'field-id': 3, name: 'note' }],
      star: false,
      parsed: true
    }], 'the view, the columns it reads by field id')
    t.equal(deps.json.complete, false, 'no crawl has run')
    const strictDeps = await getJson(`${proxy.url}/admin/v1/namespaces/sales/tables/strict/dependents`)
    t.same(strictDeps.json.views.map((v: any) => v.identifier.name), ['strict_amounts'])
    t.equal((await getJson(`${proxy.url}/admin/v1/namespaces/sales/tables/nothing/dependents`)).status, 404, 'an unknown table is the catalog\'s 404')

    // The dry run and iceguard check list the views a rename would break; the console shows them.
    const dry = await postJson(`${proxy.url}/admin/v1/validate`, { table: { namespace: ['sales'], name: 'orders' }, request: rename(FIELDS, 0, 2, 'total').body })
    t.equal(dry.status, 200, dry.text)
    t.same((dry.json as any)['affected-views'].map((v: any) => v.identifier.name), ['order_amounts'], 'the dry run lists the view')
    const noteOnly = await postJson(`${proxy.url}/admin/v1/validate`, { table: { namespace: ['sales'], name: 'orders' }, request: rename(FIELDS, 0, 3, 'comment').body })
    t.same((noteOnly.json as any)['affected-views'].map((v: any) => v.identifier.name), ['order_amounts'], 'the view reads note in its WHERE')
    const commitFile = join(work, `rename-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(commitFile, JSON.stringify(rename(FIELDS, 0, 2, 'total').body))
    let out = ''
    const io: CliIo = { stdout: (text) => { out += text }, stderr: () => {}, env: {}, cwd: work }
    t.equal(await run(['check', '--request', commitFile, '--url', proxy.url, '--dependents', proxy.url, '--table', 'sales.orders', '--policy', policy], io), 0, 'warn: exit 0')
    t.match(out, /views it would break: sales\.order_amounts/, 'iceguard check lists the view')
    const saved = join(work, `dependents-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(saved, JSON.stringify(deps.json))
    out = ''
    t.equal(await run(['check', '--request', commitFile, '--url', proxy.url, '--dependents', saved, '--table', 'sales.orders', '--format', 'json'], io), 0)
    t.same(JSON.parse(out)['affected-views'].map((v: any) => v.identifier.name), ['order_amounts'], 'or from a saved dependents answer')
    const page = await request(`${proxy.url}/console/tables/sales/orders`)
    const pageText = await page.body.text()
    t.equal(page.statusCode, 200)
    t.match(pageText, /data-view="sales\.order_amounts"/, 'the console\'s table page lists the view')
    t.notOk(pageText.includes(SECRET_SQL_MARK), 'but not its SQL')

    // Under `error`: refused, naming the view; nothing reaches the catalog.
    const before = catalog.requests.length
    const refused = await postJson(`${v1}/sales/tables/strict`, rename(FIELDS, 0, 2, 'total').body)
    t.equal(refused.status, 400, refused.text)
    t.match(refused.text, /VIEW_REFERENCES_COLUMN/)
    t.match(refused.text, /sales\.strict_amounts/, 'the message names the view')
    t.match(refused.text, /amount \(id 2\) to total/)
    t.equal(catalog.requests.slice(before).filter(r => r.method === 'POST').length, 0, 'the refused commit never reached the catalog')

    // An unrelated column: renamed freely.
    const free = await postJson(`${v1}/sales/tables/strict`, rename(FIELDS, 0, 3, 'comment').body)
    t.equal(free.status, 200, free.text)
    t.notMatch(String(free.headers['x-iceguard-warnings']), /VIEW_REFERENCES_COLUMN/, 'no view finding for a column no view reads')

    // Under `warn` (builtin:recommended): forwarded with the finding as a warning.
    const renamed = rename(FIELDS, 0, 2, 'total')
    const warned = await postJson(`${v1}/sales/tables/orders`, renamed.body)
    t.equal(warned.status, 200, warned.text)
    t.match(String(warned.headers['x-iceguard-warnings']), /VIEW_REFERENCES_COLUMN/)

    // A view written after the rename, reading the old name: a finding on the view commit.
    const stale = await postJson(`${v1}/sales/views`, createView('stale_amounts', 'SELECT id, amount FROM orders'))
    t.equal(stale.status, 200, stale.text)
    t.match(String(stale.headers['x-iceguard-warnings']), /VIEW_REFERENCES_COLUMN/, 'a view reading a column the table lacks is reported')
    const fresh = await postJson(`${v1}/sales/views`, createView('fresh_amounts', 'SELECT id, total FROM orders'))
    t.notMatch(String(fresh.headers['x-iceguard-warnings']), /VIEW_REFERENCES_COLUMN/, 'a view reading the new name is not')

    // A registered view is read from the catalog once accepted (its metadata file is the catalog's).
    const direct = await postJson(`${catalog.url}/v1/namespaces/sales/views`, createView('direct_amounts', 'SELECT note FROM orders'))
    t.equal(direct.status, 200, 'a view created straight at the catalog')
    const registered = await postJson(`${v1}/sales/register-view`, { name: 'registered_notes', 'metadata-location': (direct.json as any)['metadata-location'] })
    t.equal(registered.status, 200, registered.text)
    const withRegistered = await getJson(`${proxy.url}/admin/v1/namespaces/sales/tables/orders/dependents`)
    t.same(withRegistered.json.views.find((v: any) => v.identifier.name === 'registered_notes')?.columns, [{ 'field-id': 3, name: 'note' }], 'the registered view is indexed')
    t.notOk(withRegistered.json.views.some((v: any) => v.identifier.name === 'direct_amounts'), 'one created around iceguard waits for the crawl')
    t.equal((await request(`${v1}/sales/views/registered_notes`, { method: 'DELETE' })).statusCode, 204)

    // A renamed view is known by its new name; a dropped one is gone.
    t.equal((await postJson(`${proxy.url}/v1/views/rename`, { source: { namespace: ['sales'], name: 'fresh_amounts' }, destination: { namespace: ['sales'], name: 'fresh_totals' } })).status, 204)
    t.equal((await request(`${v1}/sales/views/stale_amounts`, { method: 'DELETE' })).statusCode, 204)
    const after = await getJson(`${proxy.url}/admin/v1/namespaces/sales/tables/orders/dependents`)
    t.same(after.json.views.map((v: any) => v.identifier.name), ['fresh_totals', 'order_amounts'])

    // Dropping a table views read: refused under `error`, reported and logged under `warn`.
    const keep = await request(`${v1}/sales/tables/strict`, { method: 'DELETE' })
    const keepText = await keep.body.text()
    t.equal(keep.statusCode, 400, keepText)
    t.match(keepText, /Cannot drop table sales\.strict: view sales\.strict_amounts \(trino\) reads it/)
    t.equal((await request(`${v1}/sales/tables/strict`)).statusCode, 200, 'the table is still there')
    const moved = await postJson(`${proxy.url}/v1/tables/rename`, { source: { namespace: ['sales'], name: 'strict' }, destination: { namespace: ['sales'], name: 'strict_v2' } })
    t.equal(moved.status, 400, moved.text)
    t.match(moved.text, /Cannot rename table sales\.strict to sales\.strict_v2: view sales\.strict_amounts \(trino\) reads it/, 'a rename is judged like a drop')
    t.equal((await request(`${v1}/sales/tables/strict`)).statusCode, 200, 'not renamed')
    const dropped = await request(`${v1}/sales/tables/orders`, { method: 'DELETE' })
    await dropped.body.text()
    t.equal(dropped.statusCode, 204)
    t.match(String(dropped.headers['x-iceguard-warnings']), /VIEW_REFERENCES_COLUMN/)
    await proxy.app.decisions.log.flush()
    const decisions = await getJson(`${proxy.url}/admin/v1/decisions?namespace=sales&table=orders&rule=VIEW_REFERENCES_COLUMN`)
    t.equal(decisions.status, 200)
    const drop = decisions.json.decisions.find((d: any) => d.kind === 'drop-table' && d.verdict === 'warn')
    t.ok(drop, 'the drop is in the decision log')
    const decisionPage = await request(`${proxy.url}/console/decisions/${encodeURIComponent(String(drop?.id))}`)
    const decisionText = await decisionPage.body.text()
    t.match(decisionText, /Views it would break/)
    t.match(decisionText, /data-view="sales\.order_amounts"/, 'the decision\'s page names the view it would have broken')

    const status = await getJson(`${proxy.url}/admin/v1/views/index`)
    t.same({ views: status.json.views, unparsed: status.json.unparsed }, { views: 3, unparsed: 0 })
    t.notOk(log.lines.some(l => l.includes(SECRET_SQL_MARK) || l.includes('SELECT')), 'no view SQL in any log line')
  })

  t.test('the crawl indexes views written around iceguard, and says when it had no credential', async t => {
    const catalog = await startCatalog(t)
    const v1 = `${catalog.url}/v1/namespaces`
    await postJson(v1, { namespace: ['sales'] })
    await postJson(v1, { namespace: ['sales', 'eu'] })
    await postJson(`${v1}/sales/tables`, createTable('orders'))
    // Straight to the catalog, in a nested namespace, naming the table fully.
    t.equal((await postJson(`${v1}/sales%1Feu/views`, createView('eu_orders', 'SELECT * FROM sales.orders'))).status, 200)
    t.equal((await postJson(`${v1}/sales/views`, createView('odd', 'SELECT id FROM orders FOR VERSION AS OF 1', 'trino'))).status, 200)
    const proxy = await startProxy(t, { upstream: catalog.url, 'view-index-interval': '3600' })
    let status: any
    for (let i = 0; i < 100; i++) {
      status = (await getJson(`${proxy.url}/admin/v1/views/index`)).json
      if (status['indexed-at'] !== undefined) break
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    t.equal(status.views, 2)
    t.equal(status.unparsed, 1)
    t.equal(status.complete, false, 'no credential: not complete')
    t.match(status.errors.join('\n'), /no catalog credential configured/)
    const deps = await getJson(`${proxy.url}/admin/v1/namespaces/sales/tables/orders/dependents`)
    t.same(deps.json.views.map((v: any) => [v.identifier.namespace.join('.'), v.identifier.name, v.star, v.parsed]),
      [['sales.eu', 'eu_orders', true, true], ['sales', 'odd', true, false]], 'by identifier levels; the unparsed one reads every column')

    // With a catalog credential the crawl is complete, and the credential reaches no log line.
    const log = captureLogLines()
    const token = 'catalog-token-zz9-secret'
    const withToken = await startProxy(t, {
      upstream: catalog.url,
      'view-index-interval': '3600',
      env: { ICEGUARD_CATALOG_TOKEN: token },
      app: { logger: { ...loggerOptions({ logLevel: 'trace' }) as object, stream: log.stream } }
    })
    let crawled: any
    for (let i = 0; i < 100; i++) {
      crawled = (await getJson(`${withToken.url}/admin/v1/views/index`)).json
      if (crawled['indexed-at'] !== undefined) break
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    t.same({ views: crawled.views, complete: crawled.complete, errors: crawled.errors }, { views: 2, complete: true, errors: [] })
    const auths = catalog.requests.filter(r => r.headers.authorization === `Bearer ${token}`)
    t.ok(auths.some(r => r.url.startsWith('/v1/namespaces/sales/views/')), 'the crawl sent the token to the catalog')
    t.notOk(log.lines.some(l => l.includes(token)), 'the token reaches no log line')
    t.notOk(log.lines.some(l => l.includes('FOR VERSION AS OF')), 'nor does a crawled view\'s SQL')
  })
})
