/**
 * The admin credential never reaches the catalog. A recording upstream stands between iceguard and
 * the embedded catalog and sees every request sent to it, on every transport, for every route
 * family that sends upstream: the Iceberg routes (reads and a gated commit), the admin API's reads
 * and each of its writes (schema-changes, plan?apply=true, plan/apply), `iceguard evolve`, and the
 * console's table page. No header of any of them carries the admin token, the identity provider's
 * admin JWT or the console cookie; the catalog credential the caller meant for the catalog travels;
 * and the admin writes record their verified principal. On the Iceberg routes an `Authorization`
 * carrying the static admin token is withheld too.
 */
import { tmpdir } from 'node:os'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { run } from '../../src/cli/main.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { startCatalog, startProxy, startRecordingUpstream, type RecordedRequest, type RunningProxy } from '../helpers/index.js'
import { relayResponder } from '../helpers/recording-upstream.js'
import { AUDIENCE, startIdentityProvider } from '../helpers/identity-provider.js'
import { onEveryTransport } from '../helpers/transports.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta } from '../helpers/gate-fixtures.js'

const ADMIN = 'admin-token-never-for-the-catalog'
const CATALOG = 'Bearer catalog-credential'

interface Answer { status: number, text: string, json: any, headers: Record<string, string | string[] | undefined> }

async function call (url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const res = await request(url, {
    method,
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) })
  })
  const text = await res.body.text()
  let json: unknown
  try { json = JSON.parse(text) } catch {}
  return { status: res.statusCode, text, json, headers: res.headers }
}

/** Every header value of every request the catalog received since `from`, joined: one haystack. */
function sentSince (seen: readonly RecordedRequest[], from: number): string {
  return seen.slice(from).map(r => r.rawHeaders.join('\n')).join('\n')
}

onEveryTransport(t, t => {
  async function setup (t: Test): Promise<{ proxy: RunningProxy, seen: RecordedRequest[], jwt: string }> {
    const catalog = await startCatalog(t)
    const relay = await startRecordingUpstream(t, relayResponder(catalog.url))
    const idp = await startIdentityProvider(t)
    const proxy = await startProxy(t, {
      upstream: relay.url,
      policy: 'builtin:spec',
      'state-dir': t.testdir(),
      'admin-jwks-url': idp.jwksUrl,
      'admin-jwt-issuer': idp.issuer,
      'admin-jwt-audience': AUDIENCE,
      env: { ICEGUARD_ADMIN_TOKEN: ADMIN }
    })
    const ice = new IcebergRestCatalog({ baseUrl: proxy.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 'orders', 2)
    return { proxy, seen: relay.requests, jwt: await idp.sign({ scope: 'iceguard:write', sub: 'alice' }) }
  }

  /** What the caller sends, and what the catalog should then get in `Authorization`. */
  const callers = (jwt: string): Array<{ name: string, headers: Record<string, string>, catalogGets: string | undefined, principal: string, secret: string }> => [
    { name: 'static token in Authorization', headers: { authorization: `Bearer ${ADMIN}` }, catalogGets: undefined, principal: 'admin-token', secret: ADMIN },
    { name: 'static token in X-Iceguard-Admin-Token, catalog credential in Authorization', headers: { 'x-iceguard-admin-token': ADMIN, authorization: CATALOG }, catalogGets: CATALOG, principal: 'admin-token', secret: ADMIN },
    { name: 'static token in both headers', headers: { 'x-iceguard-admin-token': ADMIN, authorization: `Bearer ${ADMIN}` }, catalogGets: undefined, principal: 'admin-token', secret: ADMIN },
    { name: 'identity provider JWT in Authorization', headers: { authorization: `Bearer ${jwt}` }, catalogGets: undefined, principal: 'sub:alice', secret: jwt },
    { name: 'identity provider JWT in X-Iceguard-Admin-Token, catalog credential in Authorization', headers: { 'x-iceguard-admin-token': jwt, authorization: CATALOG }, catalogGets: CATALOG, principal: 'sub:alice', secret: jwt }
  ]

  function noCredential (t: Test, seen: readonly RecordedRequest[], from: number, secret: string, catalogGets: string | undefined, what: string): void {
    const reached = seen.slice(from)
    t.ok(reached.length > 0, `${what}: requests reached the catalog`)
    t.notOk(sentSince(seen, from).includes(secret), `${what}: no header that reached the catalog carried the admin credential`)
    t.ok(reached.every(r => r.headers['x-iceguard-admin-token'] === undefined), `${what}: X-Iceguard-Admin-Token never travels`)
    t.same([...new Set(reached.map(r => r.headers.authorization))], [catalogGets], `${what}: the catalog got ${catalogGets ?? 'no Authorization'}`)
  }

  async function lastDecision (proxy: RunningProxy): Promise<any> {
    await proxy.app.decisions.log.flush()
    const list = await call(`${proxy.url}/admin/v1/decisions?table=orders`, 'GET', { authorization: `Bearer ${ADMIN}` })
    return list.json.decisions[0]
  }

  t.test('admin writes: schema-changes, plan?apply=true, plan/apply', async t => {
    const { proxy, seen, jwt } = await setup(t)
    let n = 0
    for (const caller of callers(jwt)) {
      const writes: Array<[string, string, unknown]> = [
        ['schema-changes', '/schema-changes', { changes: [{ op: 'add-column', name: `a${n++}`, type: 'string' }] }],
        ['plan?apply=true', '/schema-changes/plan?apply=true', { contract: { columns: [{ name: `b${n++}`, type: 'string' }] } }],
        ['plan/apply', '/schema-changes/plan/apply', { contract: { columns: [{ name: `c${n++}`, type: 'string' }] } }]
      ]
      for (const [what, path, body] of writes) {
        const from = seen.length
        const res = await call(`${proxy.url}/admin/v1/namespaces/db/tables/orders${path}`, 'POST', caller.headers, body)
        t.equal(res.status, 200, `${what}, ${caller.name}: ${res.status === 200 ? 'committed' : res.text}`)
        t.equal(res.json?.committed, true, `${what}: committed`)
        t.ok(seen.slice(from).some(r => r.method === 'POST'), `${what}: the commit reached the catalog`)
        noCredential(t, seen, from, caller.secret, caller.catalogGets, `${what}, ${caller.name}`)
        const decided = await lastDecision(proxy)
        t.equal(decided?.principal, caller.principal, `${what}, ${caller.name}: the decision records the verified admin principal`)
      }
    }
  })

  t.test('admin reads that load the table: history, diff, validate (dry run)', async t => {
    const { proxy, seen, jwt } = await setup(t)
    for (const caller of callers(jwt)) {
      for (const [what, method, path, body] of [
        ['history', 'GET', '/namespaces/db/tables/orders/schemas', undefined],
        ['dry-run schema change', 'POST', '/namespaces/db/tables/orders/schema-changes?dry-run=true', { changes: [{ op: 'add-column', name: 'dry', type: 'string' }] }]
      ] as const) {
        const from = seen.length
        const res = await call(`${proxy.url}/admin/v1${path}`, method, caller.headers, body)
        t.equal(res.status, 200, `${what}, ${caller.name}: ${res.status === 200 ? 'answered' : res.text}`)
        noCredential(t, seen, from, caller.secret, caller.catalogGets, `${what}, ${caller.name}`)
      }
    }
  })

  t.test('iceguard evolve (the CLI sends the admin token in X-Iceguard-Admin-Token)', async t => {
    const { proxy, seen } = await setup(t)
    const io = (): CliIo & { err: () => string } => {
      let err = ''
      return { stdout: () => {}, stderr: s => { err += s }, env: { ICEGUARD_ADMIN_TOKEN: ADMIN }, cwd: tmpdir(), err: () => err }
    }
    const from = seen.length
    const out = io()
    const code = await run(['evolve', '--url', proxy.url, '--table', 'db.orders', '--token', 'catalog-credential', '--add-column', 'from_cli:string'], out)
    t.equal(code, EXIT.OK, out.err())
    noCredential(t, seen, from, ADMIN, CATALOG, 'iceguard evolve')
    t.equal((await lastDecision(proxy))?.principal, 'admin-token', 'the commit records the admin principal')
  })

  t.test('Iceberg routes: the admin header and the console cookie are dropped, the catalog credential travels', async t => {
    const { proxy, seen } = await setup(t)
    const sent = { 'x-iceguard-admin-token': ADMIN, authorization: CATALOG, cookie: `theme=dark; iceguard_console=${ADMIN}; lang=en` }
    const from = seen.length
    t.equal((await call(`${proxy.url}/v1/config`, 'GET', sent)).status, 200, 'config')
    t.equal((await call(`${proxy.url}/v1/namespaces/db/tables/orders`, 'GET', sent)).status, 200, 'load table')
    const meta = await loadMeta(proxy.url, 'db', 'orders')
    const schema = cloneSchema(meta)
    schema.fields.push({ id: (meta['last-column-id'] as number) + 1, name: 'via_iceberg', required: false, type: 'string' })
    const commit = await call(`${proxy.url}/v1/namespaces/db/tables/orders`, 'POST', sent, clientShapes.java(meta, schema, 'db', 'orders'))
    t.equal(commit.status, 200, `a gated commit is forwarded: ${commit.text}`)
    const reached = seen.slice(from).filter(r => r.headers.authorization !== undefined)
    t.equal(reached.length, 4, 'config, load, the gate\'s base load and the commit reached the catalog with the credential')
    noCredential(t, reached, 0, ADMIN, CATALOG, 'Iceberg routes')
    t.same([...new Set(reached.map(r => r.headers.cookie))], ['theme=dark; lang=en'], 'the other cookies travel as they came')

    // The static admin token sent as if it were the catalog's credential: iceguard's, so withheld.
    const misused = { authorization: `Bearer ${ADMIN}` }
    const from2 = seen.length
    t.equal((await call(`${proxy.url}/v1/config`, 'GET', misused)).status, 200, 'config')
    t.equal((await call(`${proxy.url}/v1/namespaces/db/tables/orders`, 'GET', misused)).status, 200, 'load table')
    const meta2 = await loadMeta(proxy.url, 'db', 'orders')
    const schema2 = cloneSchema(meta2)
    schema2.fields.push({ id: (meta2['last-column-id'] as number) + 1, name: 'via_iceberg_again', required: false, type: 'string' })
    t.equal((await call(`${proxy.url}/v1/namespaces/db/tables/orders`, 'POST', misused, clientShapes.java(meta2, schema2, 'db', 'orders'))).status, 200, 'a gated commit')
    t.ok(seen.slice(from2).some(r => r.method === 'POST'), 'the commit reached the catalog')
    noCredential(t, seen, from2, ADMIN, undefined, 'Iceberg routes, static token in Authorization')
  })

  t.test('console: the table page reads as the catalog credential, never as the admin credential', async t => {
    const { proxy, seen, jwt } = await setup(t)
    for (const caller of callers(jwt)) {
      const from = seen.length
      const page = await call(`${proxy.url}/console/tables/db/orders`, 'GET', caller.headers)
      t.equal(page.status, 200, `${caller.name}: the page is served`)
      noCredential(t, seen, from, caller.secret, caller.catalogGets, `console, ${caller.name}`)
    }
    const signIn = await request(`${proxy.url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${ADMIN}` })
    await signIn.body.dump()
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string
    t.notOk(cookie.includes(ADMIN), 'the cookie does not hold the admin token')
    const from = seen.length
    const page = await call(`${proxy.url}/console/tables/db/orders`, 'GET', { cookie })
    t.equal(page.status, 200, 'signed in with the cookie')
    noCredential(t, seen, from, ADMIN, undefined, 'console, signed in')
    t.notOk(sentSince(seen, from).includes(cookie.split('=')[1] as string), 'the session id never travels either')
  })
})
