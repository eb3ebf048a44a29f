/**
 * Two iceguards sharing one PostgreSQL decision store: a view created through one is known to the
 * other within its `--view-index-refresh`, and is judged there (a rename of a column it reads is
 * refused by the other replica). Needs PostgreSQL (skipped when missing, required under CI).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { startCatalog, startProxy } from '../helpers/index.js'
import { postJson } from '../helpers/gate-fixtures.js'
import { postgresSkip, startPostgres } from '../helpers/postgres.js'

const work = mkdtempSync(join(tmpdir(), 'iceguard-view-replicas-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))
const policy = join(work, 'policy.yaml')
writeFileSync(policy, 'version: 1\nextends: builtin:spec\nrules:\n  VIEW_REFERENCES_COLUMN: error\n')

const FIELDS = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'amount', required: false, type: 'double' }
]

async function dependents (url: string): Promise<string[]> {
  const res = await request(`${url}/admin/v1/namespaces/sales/tables/orders/dependents`)
  const json = await res.body.json() as { views: Array<{ identifier: { name: string } }> }
  return json.views.map(v => v.identifier.name)
}

t.test('PostgreSQL: a view created through one replica is known to the other', { skip: postgresSkip }, async t => {
  const pgServer = await startPostgres(t)
  if (pgServer === undefined) return
  const catalog = await startCatalog(t)
  const a = await startProxy(t, { upstream: catalog.url, policy, 'database-url': pgServer.url, 'view-index-refresh': '200' })
  const b = await startProxy(t, { upstream: catalog.url, policy, 'database-url': pgServer.url, 'view-index-refresh': '200' })

  t.equal((await postJson(`${a.url}/v1/namespaces`, { namespace: ['sales'] })).status, 200)
  t.equal((await postJson(`${a.url}/v1/namespaces/sales/tables`, { name: 'orders', schema: { type: 'struct', 'schema-id': 0, fields: FIELDS } })).status, 200)
  t.same(await dependents(b.url), [], 'no view yet')

  const created = await postJson(`${a.url}/v1/namespaces/sales/views`, {
    name: 'amounts',
    schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'amount', required: false, type: 'double' }] },
    'view-version': {
      'version-id': 1,
      'timestamp-ms': 1717171717000,
      'schema-id': 0,
      summary: {},
      'default-namespace': ['sales'],
      representations: [{ type: 'sql', sql: 'SELECT amount FROM orders', dialect: 'spark' }]
    },
    properties: {}
  })
  t.equal(created.status, 200, created.text)

  let seen: string[] = []
  const started = Date.now()
  // Within a few refresh intervals (200 ms): the view was written to the shared store by A.
  while (Date.now() - started < 5000) {
    seen = await dependents(b.url)
    if (seen.length > 0) break
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.same(seen, ['amounts'], 'B knows the view A indexed')

  const refused = await postJson(`${b.url}/v1/namespaces/sales/tables/orders`, {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: [FIELDS[0], { ...FIELDS[1], name: 'total' }] } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  })
  t.equal(refused.status, 400, refused.text)
  t.match(refused.text, /view sales\.amounts \(spark\) reads it/, 'B refuses the rename, naming the view A indexed')
})
