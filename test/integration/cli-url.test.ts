/**
 * `check --url` and `diff --url`: the table's metadata loaded live, from a real iceguard in front
 * of the embedded catalog, or from the catalog itself (127.0.0.1, port 0), instead of a file; a
 * catalog prefix from `/v1/config`, the token as `Authorization`, and every failure a usage error
 * (exit 3) that names the table and the answer.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { IcebergRestCatalog } from 'iceberg-js'
import t from 'tap'
import type { CliIo } from '../../src/cli/cli-io.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import { run } from '../../src/cli/main.js'
import { jsonResponder, startCatalog, startProxy, startRecordingUpstream } from '../helpers/index.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fx = 'test/fixtures/cli'

async function cli (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env, cwd: root }
  const code = await run(args, io)
  return { code, out, err }
}

t.test('check --url and diff --url judge the live table, through iceguard or straight from the catalog', async (t) => {
  const catalog = await startCatalog(t)
  const proxy = await startProxy(t, { upstream: catalog.url })
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  // The table the fixtures' requests were written against: id, customer, quantity (ids 1–3, schema 0).
  await ice.createTable({ namespace: ['db'] }, {
    name: 'orders',
    schema: {
      type: 'struct',
      'identifier-field-ids': [1],
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'customer', required: false, type: 'string' },
        { id: 3, name: 'quantity', required: false, type: 'int' }
      ]
    } as never
  })
  catalog.clearRequests()

  for (const [where, url] of [['iceguard', proxy.url], ['the catalog', catalog.url]] as const) {
    const live = (request: string, ...more: string[]): string[] => ['check', '--url', url, '--table', 'db.orders', '--request', `${fx}/${request}.json`, ...more]
    const deny = await cli(live('narrow-type', '--format', 'json'))
    t.equal(deny.code, EXIT.DENY, `${where}: a narrowing is denied`)
    const body = JSON.parse(deny.out) as { verdict: string, table: unknown, findings: Array<Record<string, unknown>> }
    t.same(body.table, { namespace: ['db'], name: 'orders' })
    t.match(body.findings, [{ rule: 'TYPE_PROMOTION_VALID', 'field-id': 3, 'old-type': 'int', 'new-type': 'string' }], `${where}: judged against the live schema`)
    t.equal((await cli(live('drop-column'))).code, EXIT.OK, `${where}: a drop is the preset's warning`)
    t.equal((await cli(live('drop-column', '--policy', `${fx}/policy.yaml`))).code, EXIT.DENY, `${where}: and an error in db.* under the policy`)
    t.equal((await cli(live('stale-base'))).code, EXIT.CONFLICT, `${where}: a request built on another schema id is a conflict`)

    const diff = await cli(['diff', '--url', url, '--table', 'db.orders', `${fx}/schema-after.json`, '--format', 'json'])
    t.equal(diff.code, EXIT.OK, diff.err)
    const changes = (JSON.parse(diff.out) as { changes: Array<{ kind: string }>, 'from-schema-id': number }).changes.map(c => c.kind).sort()
    t.same(changes, ['field-added', 'field-renamed', 'type-changed'], `${where}: diff from the live schema, by field id`)
    const text = await cli(['diff', '--url', url, '--table', 'db.orders', `${fx}/schema-before.json`])
    t.equal(text.out, 'no changes\n', `${where}: the live schema is the one the fixture describes`)
  }
  const reads = catalog.requests.map(r => `${r.method} ${r.url}`)
  t.ok(reads.includes('GET /v1/config') && reads.includes('GET /v1/namespaces/db/tables/orders?snapshots=refs'), 'the catalog saw /v1/config, then loadTable')
  t.notOk(catalog.requests.some(r => r.method !== 'GET'), 'check and diff only read: nothing was written')

  const missing = await cli(['check', '--url', proxy.url, '--table', 'db.missing', '--request', `${fx}/narrow-type.json`])
  t.equal(missing.code, EXIT.USAGE, 'an unknown table is an input error, not a verdict')
  t.match(missing.err, /^iceguard: Cannot load table db\.missing from http:\/\/127\.0\.0\.1:\d+\/v1\/namespaces\/db\/tables\/missing\?snapshots=refs: no such table \(404 NoSuchTableException/)
  t.equal(missing.out, '')
})

t.test('--url honours the catalog prefix from /v1/config, a base path, the token and the warehouse', async (t) => {
  // A loadTable answer around the fixture's bytes: the 64-bit snapshot id as digits, as a catalog sends it.
  const answer = `{"metadata-location":"s3://bucket/db/orders/metadata/1.json","metadata":${readFileSync(`${root}${fx}/table-metadata.json`, 'utf8')}}`
  const stub = await startRecordingUpstream(t, (req, res) => {
    if (req.url.startsWith('/api/catalog/v1/config')) jsonResponder(200, { defaults: { prefix: 'from-defaults' }, overrides: { prefix: 'wh-1' } })(req, res)
    else if (req.url === '/api/catalog/v1/wh-1/namespaces/db/tables/orders?snapshots=refs' || req.url === '/api/catalog/v1/wh-1/namespaces/a%1Fb/tables/orders?snapshots=refs') jsonResponder(200, answer)(req, res)
    else jsonResponder(404, { error: { message: `no route ${req.url}`, type: 'NoSuchTableException', code: 404 } })(req, res)
  })
  const base = `${stub.url}/api/catalog/`

  // add-optional-column asserts main's 64-bit snapshot id: it holds only if every digit survived.
  const allow = await cli(['check', '--url', base, '--warehouse', 'my wh', '--request', `${fx}/add-optional-column.json`, '--format', 'json'], { ICEGUARD_TOKEN: 'env-token' })
  t.equal(allow.code, EXIT.OK, allow.err)
  t.equal((JSON.parse(allow.out) as { verdict: string }).verdict, 'allow', 'the table from the request\'s identifier; the snapshot id compared exactly')
  t.same(stub.requests.map(r => r.url), ['/api/catalog/v1/config?warehouse=my%20wh', '/api/catalog/v1/wh-1/namespaces/db/tables/orders?snapshots=refs'],
    'the base path kept, the overrides\' prefix used, the warehouse sent to /v1/config')
  t.same(stub.requests.map(r => r.headers.authorization), ['Bearer env-token', 'Bearer env-token'], 'ICEGUARD_TOKEN as the bearer token')

  stub.requests.length = 0
  const nested = await cli(['check', '--url', base, '--table', 'a.b.orders', '--token', 'flag-token', '--request', `${fx}/narrow-type.json`], { ICEGUARD_TOKEN: 'env-token' })
  t.equal(nested.code, EXIT.DENY)
  t.equal(stub.requests[1]?.url, '/api/catalog/v1/wh-1/namespaces/a%1Fb/tables/orders?snapshots=refs', 'namespace levels joined by %1F')
  t.same(stub.requests.map(r => r.headers.authorization), ['Bearer flag-token', 'Bearer flag-token'], '--token wins over ICEGUARD_TOKEN')

  stub.requests.length = 0
  await cli(['diff', '--url', base, '--table', 'db.orders', `${fx}/schema-after.json`])
  t.same(stub.requests.map(r => r.headers.authorization), [undefined, undefined], 'no token, no Authorization')
})

t.test('--url failures are input errors (exit 3) that say what failed', async (t) => {
  const stub = await startRecordingUpstream(t, jsonResponder(401, { error: { message: 'Not authorized: token expired', type: 'NotAuthorizedException', code: 401 } }))
  const denied = await cli(['check', '--url', stub.url, '--table', 'db.orders', '--request', `${fx}/narrow-type.json`])
  t.equal(denied.code, EXIT.USAGE)
  t.match(denied.err, /Cannot load the catalog configuration \(http:\/\/127\.0\.0\.1:\d+\/v1\/config\): 401 NotAuthorizedException: Not authorized: token expired/)

  const closed = stub.url
  await stub.close()
  const unreachable = await cli(['diff', '--url', closed, '--table', 'db.orders', `${fx}/schema-after.json`])
  t.equal(unreachable.code, EXIT.USAGE)
  t.match(unreachable.err, /is unreachable \(ECONNREFUSED\)/)

  const cases: Array<[string[], RegExp]> = [
    [['check', '--url', 'ftp://x', '--table', 'db.orders', '--request', `${fx}/narrow-type.json`], /Invalid --url "ftp:\/\/x"/],
    [['check', '--url', closed, '--request', `${fx}/narrow-type.json`], /the table is unknown; name it with --table/],
    [['diff', '--url', closed, `${fx}/schema-after.json`], /diff --url needs --table/],
    [['diff', '--url', closed, '--table', 'db.orders', `${fx}/schema-before.json`, `${fx}/schema-after.json`], /diff --url needs one file/],
    [['diff', '--table', 'db.orders', `${fx}/schema-before.json`, `${fx}/schema-after.json`], /diff --table is for --url/]
  ]
  for (const [args, message] of cases) {
    const r = await cli(args)
    t.equal(r.code, EXIT.USAGE, args.join(' '))
    t.match(r.err, message)
  }
})
