/**
 * Admin authentication over real HTTP: the static token, JWTs from a local identity provider
 * (JWKS on 127.0.0.1:0), read and write grants, and what reaches the upstream catalog on an admin
 * table read (the static token never does). Run against a listening server with a recording
 * upstream; admin calls are made on fresh connections and on connections that sent
 * `GET /v1/config` first (handed from the fast lane to node:http).
 */
import { SignJWT } from 'jose'
import t, { type Test } from 'tap'
import { Client, request } from 'undici'
import { ConfigError, configFrom } from '../../src/main/config.js'
import { grantsOf } from '../../src/auth/jwt-verifier.js'
import { Writable } from 'node:stream'
import { startProxy, startRecordingUpstream, type ProxyOptions } from '../helpers/index.js'
import { fixtureResponder, refusedUrl } from '../helpers/fault-upstream.js'
import { AUDIENCE, startIdentityProvider, type IdentityProvider } from '../helpers/identity-provider.js'

const STATIC = 'static-admin-token-4711'
const HISTORY = '/admin/v1/namespaces/db/tables/t/schemas'

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, json: any }

async function call (base: string, method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const res = await request(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, json: text === '' ? undefined : JSON.parse(text) }
}

function errorModel (t: Test, a: Answer, status: number, type: string, message: RegExp): void {
  t.equal(a.status, status, `status ${status}`)
  t.same(Object.keys(a.json ?? {}), ['error'], 'an IcebergErrorResponse')
  t.equal(a.json?.error?.code, status, 'error.code equals the status')
  t.equal(a.json?.error?.type, type)
  t.match(a.json?.error?.message, message)
}

async function proxyWith (t: Test, idp: IdentityProvider | undefined, env: Record<string, string> = {}) {
  const up = await startRecordingUpstream(t, fixtureResponder)
  const flags: Record<string, string> = idp === undefined ? {} : { 'admin-jwks-url': idp.jwksUrl, 'admin-jwt-issuer': idp.issuer, 'admin-jwt-audience': AUDIENCE }
  const proxy = await startProxy(t, { upstream: up.url, ...flags, env })
  return { up, proxy }
}

t.test('with JWTs configured: 401 without or with a bad token, 403 without the grant, read and write claims', async t => {
  const idp = await startIdentityProvider(t)
  const { proxy } = await proxyWith(t, idp, { ICEGUARD_ADMIN_TOKEN: STATIC })
  const reader = await idp.sign({ scope: 'openid iceguard:read' })
  const writer = await idp.sign({ scope: 'iceguard:write' })
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

  const anon = await call(proxy.url, 'GET', '/admin/v1/rules')
  errorModel(t, anon, 401, 'NotAuthorizedException', /Cannot call GET \/admin\/v1\/rules: send an admin token/)
  t.equal(anon.headers['www-authenticate'], 'Bearer realm="iceguard-admin"', 'a challenge names the scheme')

  t.equal((await call(proxy.url, 'GET', '/admin/v1/rules', bearer(reader))).status, 200, 'read grant: a read endpoint')
  t.equal((await call(proxy.url, 'GET', '/admin/v1/policy/effective?table=db.t', bearer(writer))).status, 200, 'write grant includes read')
  t.equal((await call(proxy.url, 'POST', '/admin/v1/diff', bearer(reader), JSON.stringify({ from: { type: 'struct', fields: [] }, to: { type: 'struct', fields: [] } }))).status, 200,
    'a dry run (POST) needs only read')

  const denied = await call(proxy.url, 'POST', '/admin/v1/policy/reload', bearer(reader))
  errorModel(t, denied, 403, 'ForbiddenException', /does not grant write access \(it needs "iceguard:write"\)/)
  t.equal(denied.headers['www-authenticate'], 'Bearer realm="iceguard-admin", error="insufficient_scope", scope="iceguard:write"')
  t.equal((await call(proxy.url, 'POST', '/admin/v1/policy/reload', bearer(writer))).status, 200, 'write grant: reload')
  t.equal((await call(proxy.url, 'POST', '/admin/v1/policy/reload', bearer(STATIC))).status, 200, 'the static token still works beside JWTs')

  // A commit through the gate as the caller needs write; the same endpoint as a dry run needs read.
  const changes = JSON.stringify({ changes: [{ op: 'add-column', name: 'note', type: 'string' }] })
  const commit = await call(proxy.url, 'POST', '/admin/v1/namespaces/db/tables/t/schema-changes', bearer(reader), changes)
  errorModel(t, commit, 403, 'ForbiddenException', /does not grant write access/)
  const dry = await call(proxy.url, 'POST', '/admin/v1/namespaces/db/tables/t/schema-changes?dry-run=true', bearer(reader), changes)
  t.not(dry.status, 401, 'a dry run passes authentication with read')
  t.not(dry.status, 403)
  t.equal((await call(proxy.url, 'POST', '/admin/v1/namespaces/db/tables/t/schema-changes/plan/apply', bearer(reader), '{}')).status, 403, 'applying a plan needs write')

  const none = await idp.sign({ scope: 'openid profile' })
  errorModel(t, await call(proxy.url, 'GET', '/admin/v1/rules', bearer(none)), 403, 'ForbiddenException', /does not grant read access \(it needs "iceguard:read"\)/)

  const now = Math.floor(Date.now() / 1000)
  const refused: Array<[string, string, RegExp]> = [
    ['expired an hour ago', await idp.sign({ scope: 'iceguard:write', iat: now - 7200, exp: now - 3600 }), /has expired/],
    ['another audience', await idp.sign({ scope: 'iceguard:write', aud: 'some-other-app' }), /"aud" claim/],
    ['another issuer', await idp.sign({ scope: 'iceguard:write', iss: 'http://127.0.0.1:1/evil' }), /"iss" claim/],
    ['not yet valid', await idp.sign({ scope: 'iceguard:write', nbf: now + 3600 }), /"nbf" claim/],
    ['signed by a stranger under the provider\'s key id', await idp.sign({ scope: 'iceguard:write' }, { stranger: true }), /signature does not verify/],
    ['HS256 with the static token as its secret', await new SignJWT({ iss: idp.issuer, aud: AUDIENCE, scope: 'iceguard:write' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(STATIC)), /algorithm is not accepted/],
    ['not a JWT', 'not-a-jwt', /not a valid JWT/]
  ]
  for (const [what, token, message] of refused) {
    const a = await call(proxy.url, 'GET', '/admin/v1/rules', bearer(token))
    errorModel(t, a, 401, 'NotAuthorizedException', message)
    t.equal(a.headers['www-authenticate'], 'Bearer realm="iceguard-admin", error="invalid_token"', `${what}: invalid_token`)
  }
  // Tampering with the payload of a good token breaks its signature.
  const [h, p, s] = reader.split('.') as [string, string, string]
  const forged = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>
  forged.scope = 'iceguard:write'
  errorModel(t, await call(proxy.url, 'POST', '/admin/v1/policy/reload', bearer(`${h}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${s}`)), 401, 'NotAuthorizedException', /signature/)
})

t.test('a configurable claim: an array of roles reached by a dotted name', async t => {
  const idp = await startIdentityProvider(t)
  const up = await startRecordingUpstream(t, fixtureResponder)
  const proxy = await startProxy(t, {
    upstream: up.url,
    'admin-jwks-url': idp.jwksUrl,
    'admin-jwt-issuer': idp.issuer,
    'admin-jwt-audience': AUDIENCE,
    env: { ICEGUARD_ADMIN_JWT_CLAIM: 'realm_access.roles', ICEGUARD_ADMIN_JWT_READ: 'catalog-viewer', ICEGUARD_ADMIN_JWT_WRITE: 'catalog-admin' }
  })
  const viewer = await idp.sign({ realm_access: { roles: ['offline_access', 'catalog-viewer'] }, scope: 'iceguard:write' })
  t.equal((await call(proxy.url, 'GET', '/admin/v1/rules', { authorization: `Bearer ${viewer}` })).status, 200)
  const denied = await call(proxy.url, 'POST', '/admin/v1/policy/reload', { authorization: `Bearer ${viewer}` })
  t.equal(denied.status, 403, 'the scope claim means nothing once another claim is configured')
  t.match(denied.json.error.message, /it needs "catalog-admin"/)
  const admin = await idp.sign({ realm_access: { roles: ['catalog-admin'] } })
  t.equal((await call(proxy.url, 'POST', '/admin/v1/policy/reload', { authorization: `Bearer ${admin}` })).status, 200)
})

t.test('an unreachable key set is a 503 with Retry-After, not a verdict on the token; its address goes to the log, not the answer', async t => {
  const idp = await startIdentityProvider(t)
  const token = await idp.sign({ scope: 'iceguard:read' })
  const up = await startRecordingUpstream(t, fixtureResponder)
  const jwks = `${await refusedUrl()}/jwks.json`
  const lines: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _e, cb) { lines.push(...chunk.toString('utf8').split('\n').filter(l => l !== '')); cb() } })
  const proxy = await startProxy(t, {
    upstream: up.url,
    'admin-jwks-url': jwks,
    'admin-jwt-issuer': idp.issuer,
    'admin-jwt-audience': AUDIENCE,
    'retry-after': '7',
    app: { logger: { level: 'warn', stream } }
  } as unknown as ProxyOptions)
  const a = await call(proxy.url, 'GET', '/admin/v1/rules', { authorization: `Bearer ${token}` })
  errorModel(t, a, 503, 'ServiceUnavailableException', /cannot be checked now: the identity provider's key set could not be fetched$/)
  t.equal(a.headers['retry-after'], '7')
  t.notMatch(JSON.stringify(a.json), /127\.0\.0\.1|jwks/, 'the answer names no address of the identity provider')
  const signIn = await request(`${proxy.url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` })
  const page = await signIn.body.text()
  t.equal(signIn.statusCode, 503, 'the console\'s sign-in answers 503 too')
  t.match(page, /key set could not be fetched/, 'and says why')
  t.notMatch(page, /127\.0\.0\.1|jwks/, 'without the key set\'s address')
  t.ok(lines.some(l => l.includes(jwks) && l.includes('admin JWTs cannot be checked')), 'the log names the key set\'s URL')
})

t.test('a JWT must carry exp, and an ID token is not an admin credential', async t => {
  const idp = await startIdentityProvider(t)
  const { proxy } = await proxyWith(t, idp)
  const rules = async (token: string): Promise<Answer> => await call(proxy.url, 'GET', '/admin/v1/rules', { authorization: `Bearer ${token}` })
  t.equal((await rules(await idp.sign({ scope: 'iceguard:read' }))).status, 200, 'an access token with exp is accepted')
  t.equal((await rules(await idp.sign({ scope: 'iceguard:read' }, { typ: 'at+jwt' }))).status, 200, 'typ at+jwt (RFC 9068) is accepted')
  errorModel(t, await rules(await idp.sign({ scope: 'iceguard:read', exp: undefined })), 401, 'NotAuthorizedException', /"exp" claim is not accepted \(missing\)/)
  errorModel(t, await rules(await idp.sign({ scope: 'iceguard:read', typ: 'ID' })), 401, 'NotAuthorizedException', /"typ" claim "ID" is not an access token's/)
  errorModel(t, await rules(await idp.sign({ scope: 'iceguard:read', at_hash: 'x1' })), 401, 'NotAuthorizedException', /is an ID token/)
  errorModel(t, await rules(await idp.sign({ scope: 'iceguard:read' }, { typ: 'id_token+jwt' })), 401, 'NotAuthorizedException', /"typ" header "id_token\+jwt" is not an access token's/)
  t.equal((await rules(await idp.sign({ scope: 'iceguard:read', typ: 'Bearer' }))).status, 200, 'Keycloak\'s typ: Bearer claim is an access token')
})

t.test('what reaches the upstream on an admin table read, on fresh and reused connections', async t => {
  const idp = await startIdentityProvider(t)
  const { up, proxy } = await proxyWith(t, idp, { ICEGUARD_ADMIN_TOKEN: STATIC })
  const jwt = await idp.sign({ scope: 'iceguard:read' })
  const reused = new Client(proxy.url, { pipelining: 1 })
  t.teardown(() => reused.close())
  const config = await reused.request({ method: 'GET', path: '/v1/config' })
  await config.body.dump()
  t.equal(config.statusCode, 200, 'the connection opened with GET /v1/config')

  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ['the static token never travels', { authorization: `Bearer ${STATIC}` }, undefined],
    ['an identity provider\'s admin JWT does not travel either', { authorization: `Bearer ${jwt}` }, undefined],
    ['beside a JWT in X-Iceguard-Admin-Token, Authorization is the catalog\'s', { 'x-iceguard-admin-token': jwt, authorization: 'Bearer catalog-token' }, 'Bearer catalog-token'],
    ['beside X-Iceguard-Admin-Token, Authorization is the catalog\'s', { 'x-iceguard-admin-token': STATIC, authorization: 'Bearer catalog-token' }, 'Bearer catalog-token']
  ]
  for (const [what, headers, expected] of cases) {
    for (const [transport, send] of [
      ['fresh connection', async () => await request(`${proxy.url}${HISTORY}`, { headers })],
      ['after GET /v1/config', async () => await reused.request({ method: 'GET', path: HISTORY, headers })]
    ] as const) {
      const before = up.requests.length
      const res = await send()
      const body = await res.body.json() as { schemas?: unknown[] }
      t.equal(res.statusCode, 200, `${what} (${transport}): answered`)
      t.equal(body.schemas?.length, 1, 'the history of the upstream\'s table')
      const seen = up.requests.slice(before)
      t.equal(seen.length, 1, 'one table load reached the upstream')
      t.equal(seen[0]?.headers.authorization, expected, `${what} (${transport})`)
      t.equal(seen[0]?.headers['x-iceguard-admin-token'], undefined, 'the admin header never travels')
      t.notOk(seen[0]?.rawHeaders.some(v => v.includes(STATIC)), 'the static token appears in no upstream header')
    }
  }
  const refused = up.requests.length
  t.equal((await call(proxy.url, 'GET', HISTORY)).status, 401, 'no token, no read')
  t.equal(up.requests.length, refused, 'and nothing reached the upstream')
})

t.test('without any admin authentication: reads open, state changes refused', async t => {
  const { up, proxy } = await proxyWith(t, undefined)
  t.equal((await call(proxy.url, 'GET', '/admin/v1/rules')).status, 200)
  const r = await call(proxy.url, 'GET', HISTORY, { authorization: 'Bearer catalog-token' })
  t.equal(r.status, 200)
  t.equal(up.requests.at(-1)?.headers.authorization, 'Bearer catalog-token', 'the caller\'s catalog credential travels as before')
  errorModel(t, await call(proxy.url, 'POST', '/admin/v1/policy/reload'), 403, 'ForbiddenException', /disabled on this server \(set ICEGUARD_ADMIN_TOKEN or ICEGUARD_ADMIN_JWKS_URL/)
})

function problemsOf (fields: Parameters<typeof configFrom>[0], env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    configFrom(fields, env)
  } catch (err) {
    if (err instanceof ConfigError) return err.problems
    throw err
  }
  return []
}

t.test('configuration: JWTs need an issuer and an audience; JWT settings need a key set', async t => {
  t.match(problemsOf({ 'admin-jwks-url': 'https://idp.example/jwks' }), [/--admin-jwt-issuer\/ICEGUARD_ADMIN_JWT_ISSUER: required/, /--admin-jwt-audience\/ICEGUARD_ADMIN_JWT_AUDIENCE: required/])
  t.match(problemsOf({ 'admin-jwt-audience': 'x' }), [/--admin-jwt-audience\/ICEGUARD_ADMIN_JWT_AUDIENCE: needs --admin-jwks-url/])
  const env = { ICEGUARD_ADMIN_JWKS_URL: 'https://idp.example/jwks', ICEGUARD_ADMIN_JWT_ISSUER: 'https://idp.example', ICEGUARD_ADMIN_JWT_AUDIENCE: 'iceguard' }
  t.match(problemsOf({}, { ...env, ICEGUARD_ADMIN_JWKS_URL: 'ftp://idp/jwks' }), [/must start with http/])
  t.match(problemsOf({}, { ...env, ICEGUARD_ADMIN_JWT_READ: 'x', ICEGUARD_ADMIN_JWT_WRITE: 'x' }), [/must differ/])
  t.same(configFrom({}, env).adminJwt, { jwksUrl: 'https://idp.example/jwks', issuer: 'https://idp.example', audience: 'iceguard', claim: 'scope', readValue: 'iceguard:read', writeValue: 'iceguard:write' })
  t.equal(configFrom({}).adminJwt, undefined, 'off unless configured')
})

t.test('grants: space-separated strings and arrays; a value must match whole', async t => {
  const s = { claim: 'scope', readValue: 'iceguard:read', writeValue: 'iceguard:write' }
  t.same([...grantsOf({ scope: 'openid iceguard:read' }, s)], ['read'])
  t.same([...grantsOf({ scope: ['iceguard:write'] } as never, s)], ['write'])
  t.same([...grantsOf({ scope: 'iceguard:read-only iceguard:writer' }, s)], [], 'no prefix matches')
  t.same([...grantsOf({ scope: 42 } as never, s)], [])
  t.same([...grantsOf({ a: { b: ['iceguard:read'] } } as never, { ...s, claim: 'a.b' })], ['read'])
  t.same([...grantsOf({ a: 'iceguard:read' } as never, { ...s, claim: 'a.b' })], [], 'a path through a string reaches nothing')
})
