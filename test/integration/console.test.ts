/**
 * The console over plain HTTP: what each page says (a rename of field id 2, the drop of field id 3,
 * a deny with its rule), that every piece of user input is escaped, the filters, sign-in with the
 * static token and with a JWT through the cookie, and that the static token never reaches the
 * catalog from a console page. A listening server in front of the embedded catalog.
 */
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { Client, request } from 'undici'
import { memoryDecisionSource, type DecisionRecord } from '../../src/console/decision-source.js'
import { memoryOverrideSource } from '../../src/console/override-source.js'
import { escapeHtml } from '../../src/console/html.js'
import { adminApiDecisionSource } from '../../routes/console/admin-api-decisions.js'
import { startCatalog, startProxy, startRecordingUpstream } from '../helpers/index.js'
import { fixtureResponder } from '../helpers/fault-upstream.js'
import { DECISIONS, HOSTILE, makeOrdersHistory, OVERRIDES } from '../helpers/console-fixtures.js'
import { AUDIENCE, startIdentityProvider } from '../helpers/identity-provider.js'

const POLICY = new URL('../fixtures/cli/policy.yaml', import.meta.url).pathname
const STATIC = 'console-static-token-1234'

interface Page { status: number, headers: Record<string, string | string[] | undefined>, text: string }

async function get (url: string, headers: Record<string, string> = {}): Promise<Page> {
  const res = await request(url, { headers })
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() }
}

async function postForm (url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() })
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() }
}

/** The text of the page without tags, whitespace collapsed: what a reader sees. */
function visible (htmlText: string): string {
  return htmlText.replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/\s+/g, ' ')
}

/** A proxy whose console shows these decisions; returns its URL. */
async function openConsoleWith (t: Test, decisions: DecisionRecord[]): Promise<string> {
  const up = await startRecordingUpstream(t, fixtureResponder)
  const proxy = await startProxy(t, { upstream: up.url, app: { console: { decisions: memoryDecisionSource(decisions) } } })
  return proxy.url
}

async function openConsole (t: Test, env: Record<string, string> = {}, flags: Record<string, string> = {}) {
  const catalog = await startCatalog(t)
  await makeOrdersHistory(catalog.url)
  const proxy = await startProxy(t, {
    upstream: catalog.url,
    policy: POLICY,
    ...flags,
    env,
    app: { console: { decisions: memoryDecisionSource(DECISIONS), overrides: memoryOverrideSource(OVERRIDES) } }
  })
  return { catalog, proxy }
}

t.test('the table page: timeline by field id, renames and drops marked, policy, contract, overrides', async t => {
  const { proxy } = await openConsole(t)
  const page = await get(`${proxy.url}/console/tables/db/orders`)
  t.equal(page.status, 200)
  t.match(page.headers['content-type'], /^text\/html; charset=utf-8/)
  t.match(page.headers['content-security-policy'], /default-src 'none'/, 'no script may run')
  const text = visible(page.text)
  t.match(text, /Table db\.orders/)
  t.match(text, /Schema 2 \(current\), after schema 1/)
  t.match(page.text, /<li data-change="rename" data-field-id="2">/, 'the rename is marked as such, by field id')
  t.match(text, /rename field id 2: customer → buyer/)
  t.match(page.text, /<li data-change="drop" data-field-id="3">/, 'the drop is marked')
  t.match(text, /drop field id 3: quantity \(int\)/)
  t.match(text, /add field id 4: <img src=x onerror="alert\(1\)"> \(string\)/, 'the hostile column name is shown as text')
  t.notOk(page.text.includes(HOSTILE), 'and never as markup')
  t.ok(page.text.includes(escapeHtml(HOSTILE)), 'escaped where it appears')
  t.match(text, /2 customer renamed to buyer string 0 live/, 'lineage follows field id 2 through its rename')
  t.match(text, /3 quantity int 0 dropped in schema 2/, 'lineage marks the drop of field id 3')
  t.match(text, /COLUMN_NO_DROP error namespace:db/, 'the effective policy with the scope each rule came from')
  t.match(text, /does not meet the contract/, 'the contract status')
  t.match(text, /ovr-1 bob COLUMN_NO_DROP 2999-01-01T00:00:00\.000Z planned cleanup of quantity/, 'the override in force')
  t.notMatch(text, /ovr-2|ovr-3/, 'expired and revoked overrides are not in force')

  const open = await postForm(`${proxy.url}/console/login`, { token: 'anything' })
  t.equal(open.status, 303, 'with no admin authentication configured, sign-in just goes on')
  t.equal(open.headers['set-cookie'], undefined, 'and keeps no token')

  const missing = await get(`${proxy.url}/console/tables/db/nope`)
  t.equal(missing.status, 200, 'a table the catalog does not have is a page that says so')
  t.match(visible(missing.text), /Cannot read table db\.nope: the catalog answered 404/)
})

t.test('the schema timeline pages from the newest schemas back, through the history\'s page tokens', async t => {
  const { proxy } = await openConsole(t)
  const ids = (text: string): string[] => [...text.matchAll(/data-schema-id="(\d+)"/g)].map(m => m[1] as string)
  const whole = await get(`${proxy.url}/console/tables/db/orders`)
  t.same(ids(whole.text), ['2', '1', '0'], 'by default every schema fits one page, newest first')
  t.notMatch(whole.text, /Older schemas|Newest schemas/, 'and there is no other page')

  const newest = await get(`${proxy.url}/console/tables/db/orders?schemas=2`)
  t.equal(newest.status, 200)
  t.same(ids(newest.text), ['2', '1'], 'a page of two holds the two newest schemas, newest first')
  t.match(visible(newest.text), /3 quantity int 0 dropped in schema 2/, 'lineage still covers the whole history')
  const older = /<a rel="next" href="([^"]+)">Older schemas/.exec(newest.text)?.[1]
  t.ok(older !== undefined, 'with a link to older schemas')
  t.notMatch(newest.text, /Newest schemas/, 'and none to the newest: this is it')
  const olderPage = await get(`${proxy.url}${(older ?? '').replace(/&amp;/g, '&')}`)
  t.equal(olderPage.status, 200)
  t.same(ids(olderPage.text), ['0'], 'the older page holds the schema before them, no overlap')
  t.match(visible(olderPage.text), /Schema 0 initial schema/)
  t.notMatch(olderPage.text, /Older schemas/, 'the oldest page links no further back')
  t.match(olderPage.text, /<a rel="first" href="\/console\/tables\/db\/orders\?schemas=1">← Newest schemas/, 'but back to the newest (as many as this page holds)')

  const walked: string[] = []
  let next: string | undefined = '/console/tables/db/orders?schemas=1'
  while (next !== undefined) {
    const page: Page = await get(`${proxy.url}${next.replace(/&amp;/g, '&')}`)
    walked.push(...ids(page.text))
    next = /<a rel="next" href="([^"]+)">Older schemas/.exec(page.text)?.[1]
  }
  t.same(walked, ['2', '1', '0'], 'pages of one walk the whole history from the newest back')

  const bad = await get(`${proxy.url}/console/tables/db/orders?schemas-from=${encodeURIComponent('<bogus>')}`)
  t.equal(bad.status, 400, 'a page token that is not one of the table\'s is refused')
  t.match(visible(bad.text), /Cannot show the schemas of db\.orders: "<bogus>" is not a page token/)
  t.notOk(bad.text.includes('<bogus>'), 'and shown escaped')
})

t.test('the decisions page: newest first, filters, every field escaped', async t => {
  const { proxy } = await openConsole(t)
  const all = await get(`${proxy.url}/console/decisions`)
  t.equal(all.status, 200)
  const order = [...all.text.matchAll(/data-decision="([^"]+)"/g)].map(m => m[1])
  t.same(order, ['d-3', 'd-2', 'd-1'], 'newest first')
  t.notOk(all.text.includes(HOSTILE) || all.text.includes('<script>') || all.text.includes('"><b>'), 'no user input reaches the page as markup')
  t.ok(all.text.includes('href="/console/tables/finance%1F%3Cscript%3E/ledger%22%3E%3Cb%3E"'), 'table links are percent-encoded')
  t.notMatch(all.text, /action="\/console\/logout"/, 'no sign-out without a session')

  const denied = await get(`${proxy.url}/console/decisions?verdict=deny`)
  t.same([...denied.text.matchAll(/data-decision="([^"]+)"/g)].map(m => m[1]), ['d-2'])
  const text = visible(denied.text)
  t.match(text, /db\.orders update-table deny alice COLUMN_NO_DROP error · field id 3 · quantity ?: Cannot drop column quantity/, 'the deny with its rule, field and message')
  t.match(denied.text, /<option value="deny" selected>/, 'the filter stays selected')

  const byRule = await get(`${proxy.url}/console/decisions?rule=FIELD_DOC_REQUIRED`)
  t.same([...byRule.text.matchAll(/data-decision="([^"]+)"/g)].map(m => m[1]), ['d-3'])
  const byTable = await get(`${proxy.url}/console/decisions?namespace=db&table=orders`)
  t.same([...byTable.text.matchAll(/data-decision="([^"]+)"/g)].map(m => m[1]), ['d-2', 'd-1'])
  t.match(visible((await get(`${proxy.url}/console/decisions?verdict=conflict`)).text), /No decisions match these filters/)
})

t.test('the page of one decision: every field, rule links, the override; linked from the list; escaped', async t => {
  const { proxy } = await openConsole(t)
  const list = await get(`${proxy.url}/console/decisions`)
  t.ok(list.text.includes('<a href="/console/decisions/d-2">'), 'each row links to its decision')
  t.ok(list.text.includes('<a href="/rules/COLUMN_NO_DROP"><code>COLUMN_NO_DROP</code></a>'), 'rule ids link to their rule page')

  const denied = await get(`${proxy.url}/console/decisions/d-2`)
  t.equal(denied.status, 200)
  t.match(denied.headers['content-security-policy'], /default-src 'none'/)
  const text = visible(denied.text)
  t.match(text, /Id d-2 Time 2026-12-01T10:15:00\.000Z/, 'id and time')
  t.match(text, /Table db\.orders Namespace levels db Kind update-table Verdict deny Principal alice Changes dropped field 3 quantity/, 'every field of the record')
  t.ok(denied.text.includes('href="/console/tables/db/orders"'), 'the table links to its page (no prefix: the record keeps none)')
  t.match(text, /Findings COLUMN_NO_DROP error · field id 3 · quantity ?: Cannot drop column quantity/, 'the finding with field id and path')
  t.ok(denied.text.includes('<a href="/rules/COLUMN_NO_DROP">'), 'its rule links to the rule page')
  t.match(text, /No override was used/)

  const hostile = await get(`${proxy.url}/console/decisions/d-3`)
  t.equal(hostile.status, 200)
  t.notOk(hostile.text.includes(HOSTILE) || hostile.text.includes('<script>') || hostile.text.includes('"><b>'), 'no user input reaches the page as markup')
  t.ok(hostile.text.includes(escapeHtml(HOSTILE)), 'it is shown escaped')
  t.match(visible(hostile.text), /Namespace levels finance · <script>/, 'namespace levels one by one')
  t.match(visible(hostile.text), /Override ovr-77/, 'the override used')

  const waived = await openConsoleWith(t, [{ ...DECISIONS[1] as DecisionRecord, id: 'd-9', verdict: 'allow', 'request-id': 'req-9', override: { id: 'ovr-1', rules: ['COLUMN_NO_DROP'] } }])
  const page = await get(`${waived}/console/decisions/d-9`)
  t.match(visible(page.text), /Request id req-9/, 'the request id')
  t.match(visible(page.text), /Override ovr-1 , waiving COLUMN_NO_DROP/, 'the override and the rules it waived')
  t.ok(page.text.includes('waiving <a href="/rules/COLUMN_NO_DROP">'), 'waived rules link to their page')

  const missing = await get(`${proxy.url}/console/decisions/${encodeURIComponent('<nope>')}`)
  t.equal(missing.status, 404)
  t.match(visible(missing.text), /Cannot find decision <nope>: no such decision/)
  t.notOk(missing.text.includes('<nope>'), 'the id is escaped')
})

t.test('the default sources: the server\'s own decision log and override records; the adapter asks GET /admin/v1/decisions as the viewer', async t => {
  const up = await startRecordingUpstream(t, fixtureResponder)
  const proxy = await startProxy(t, { upstream: up.url, env: { ICEGUARD_ADMIN_TOKEN: STATIC } })
  const page = await get(`${proxy.url}/console/decisions`, { authorization: `Bearer ${STATIC}` })
  t.equal(page.status, 200)
  t.match(visible(page.text), /No decisions match these filters/, 'a fresh server\'s own (empty) decision log is read')
  t.equal((await get(`${proxy.url}/console/decisions`)).status, 401, 'and only with the admin token')

  const before = up.requests.length
  const prefixed = await get(`${proxy.url}/console/tables/db/t?prefix=wh`, { authorization: `Bearer ${STATIC}` })
  t.equal(prefixed.status, 200)
  t.match(visible(prefixed.text), /Schema 0 \(current\)/)
  t.same(up.requests.slice(before).map(r => r.url.split('?')[0]), ['/v1/wh/namespaces/db/tables/t'], 'the catalog prefix reaches the table load')

  // The adapter against a stand-in for the query API, to check what it asks and how it reads the answer.
  const api = Fastify()
  const asked: Array<{ url: string, authorization: string | undefined }> = []
  api.get('/admin/v1/decisions', async (req) => {
    asked.push({ url: req.url, authorization: req.headers.authorization })
    return { decisions: [DECISIONS[1]], 'next-page-token': 'p2' }
  })
  api.get('/admin/v1/decisions/:id', async (req, reply) => {
    asked.push({ url: req.url, authorization: req.headers.authorization })
    const id = (req.params as { id: string }).id
    if (id === 'd-2') return DECISIONS[1]
    return await reply.code(404).send({ error: { message: `Cannot find decision ${id}: no such decision`, type: 'NotFoundException', code: 404 } })
  })
  t.teardown(() => api.close())
  const got = await adminApiDecisionSource(api).list({ verdict: 'deny', rule: 'COLUMN_NO_DROP', pageToken: 'p1' }, { authorization: 'Bearer viewer' })
  t.same(asked, [{ url: '/admin/v1/decisions?verdict=deny&rule=COLUMN_NO_DROP&page-token=p1', authorization: 'Bearer viewer' }])
  t.equal(got.decisions[0]?.id, 'd-2')
  t.equal(got.nextPageToken, 'p2')

  t.equal((await adminApiDecisionSource(api).get('d-2', { authorization: 'Bearer viewer' }))?.id, 'd-2', 'one decision by id')
  t.equal(await adminApiDecisionSource(api).get('a/b', {}), undefined, 'an unknown id is none')
  t.same(asked.slice(-2).map(a => a.url), ['/admin/v1/decisions/d-2', '/admin/v1/decisions/a%2Fb'], 'the id is one path segment')
  await t.rejects(adminApiDecisionSource(Fastify()).get('d-2', {}), /not available/, 'no such route: the log is not available')

  const own = await get(`${proxy.url}/console/decisions/nope`, { authorization: `Bearer ${STATIC}` })
  t.equal(own.status, 404, 'the server\'s own log: an unknown id is a 404 page')
})

t.test('sign-in: 401 login page, a session cookie (not the token), sign-out ends the session; the token never reaches the catalog', async t => {
  const { catalog, proxy } = await openConsole(t, { ICEGUARD_ADMIN_TOKEN: STATIC })
  const anon = await get(`${proxy.url}/console/decisions`)
  t.equal(anon.status, 401, 'no token: the sign-in page, as a 401')
  t.match(anon.text, /<form method="post" action="\/console\/login"/)
  t.notMatch(anon.text, /data-decision/, 'and no decisions')

  const wrong = await postForm(`${proxy.url}/console/login`, { token: 'nope' })
  t.equal(wrong.status, 401)
  t.match(visible(wrong.text), /the admin token is not valid/)
  t.equal(wrong.headers['set-cookie'], undefined, 'no cookie for a wrong token')

  const other = await postForm(`${proxy.url}/console/login`, { token: STATIC }, { origin: 'http://evil.example' })
  t.equal(other.status, 403, 'a sign-in posted from another site is refused')
  t.equal(other.headers['set-cookie'], undefined)

  const ok = await postForm(`${proxy.url}/console/login`, { token: STATIC }, { origin: proxy.url })
  t.equal(ok.status, 303)
  t.equal(ok.headers.location, '/console/decisions')
  const cookie = String(ok.headers['set-cookie'])
  t.match(cookie, /^iceguard_console=[A-Za-z0-9_-]{43}; Max-Age=28800; Path=\/console; HttpOnly; SameSite=Lax$/, 'a random session id')
  t.notMatch(cookie, STATIC, 'the cookie does not hold the admin token')
  const jar = cookie.split(';')[0] as string
  const second = String((await postForm(`${proxy.url}/console/login`, { token: STATIC })).headers['set-cookie']).split(';')[0] as string
  t.not(second, jar, 'each sign-in is a new session')

  const before = catalog.requests.length
  const page = await get(`${proxy.url}/console/tables/db/orders`, { cookie: jar })
  t.equal(page.status, 200)
  t.match(visible(page.text), /rename field id 2/)
  t.match(page.text, /action="\/console\/logout"/, 'a sign-out button for a cookie session')
  const seen = catalog.requests.slice(before)
  t.ok(seen.length > 0, 'the table was read from the catalog')
  t.ok(seen.every(r => r.headers.authorization === undefined && r.headers.cookie === undefined), 'without the static token and without the cookie')

  t.equal((await get(`${proxy.url}/console/decisions`, { authorization: `Bearer ${STATIC}` })).status, 200, 'tools send the token as a header')
  // A connection that opened with GET /v1/config (handed from the fast lane to node:http) serves the console alike.
  const reused = new Client(proxy.url, { pipelining: 1 })
  t.teardown(() => reused.close())
  const config = await reused.request({ method: 'GET', path: '/v1/config' })
  await config.body.dump()
  t.equal(config.statusCode, 200)
  const again = await reused.request({ method: 'GET', path: '/console/tables/db/orders', headers: { cookie: jar } })
  t.equal(again.statusCode, 200)
  t.match(visible(await again.body.text()), /drop field id 3: quantity/, 'the same page on a reused connection')
  const anonAgain = await reused.request({ method: 'GET', path: '/console/decisions' })
  await anonAgain.body.dump()
  t.equal(anonAgain.statusCode, 401, 'and asks for a token there too')
  t.equal((await get(`${proxy.url}/admin/v1/rules`, { cookie: jar })).status, 401, 'the console cookie opens no admin API endpoint')
  const forged = await postForm(`${proxy.url}/console/logout`, {}, { origin: 'http://evil.example', cookie: jar })
  t.equal(forged.status, 403, 'a sign-out posted from another site is refused')
  t.equal(forged.headers['set-cookie'], undefined, 'and clears no cookie')
  t.equal((await get(`${proxy.url}/console/decisions`, { cookie: jar })).status, 200, 'the session still holds')
  const out = await postForm(`${proxy.url}/console/logout`, {}, { origin: proxy.url, cookie: jar })
  t.equal(out.status, 303)
  t.match(String(out.headers['set-cookie']), /^iceguard_console=; Max-Age=0; Path=\/console; HttpOnly; SameSite=Lax$/)
  t.equal((await get(`${proxy.url}/console/decisions`, { cookie: jar })).status, 401, 'a copy of the cookie kept after sign-out opens nothing: the session ended on the server')
  t.equal((await get(`${proxy.url}/console/decisions`, { cookie: second })).status, 200, 'another session is not ended by it')
})

t.test('sign-in with JWTs: read grant needed, expired refused, the JWT never travels to the catalog', async t => {
  const idp = await startIdentityProvider(t)
  const { catalog, proxy } = await openConsole(t, {}, { 'admin-jwks-url': idp.jwksUrl, 'admin-jwt-issuer': idp.issuer, 'admin-jwt-audience': AUDIENCE, 'public-url': 'https://iceguard.example' })
  const noGrant = await postForm(`${proxy.url}/console/login`, { token: await idp.sign({ scope: 'openid' }) })
  t.equal(noGrant.status, 403)
  t.match(visible(noGrant.text), /does not grant read access \(it needs "iceguard:read"\)/)
  const now = Math.floor(Date.now() / 1000)
  const expired = await postForm(`${proxy.url}/console/login`, { token: await idp.sign({ scope: 'iceguard:read', iat: now - 7200, exp: now - 3600 }) })
  t.equal(expired.status, 401)
  t.match(visible(expired.text), /has expired/)

  const reader = await idp.sign({ scope: 'iceguard:read', sub: 'carol' })
  const ok = await postForm(`${proxy.url}/console/login`, { token: reader })
  t.equal(ok.status, 303)
  t.match(String(ok.headers['set-cookie']), /; Secure; SameSite=Lax$/, 'Secure when iceguard is reached over HTTPS')
  const jar = String(ok.headers['set-cookie']).split(';')[0] as string
  const before = catalog.requests.length
  const page = await get(`${proxy.url}/console/tables/db/orders`, { cookie: jar })
  t.equal(page.status, 200)
  t.match(visible(page.text), /signed in as carol/)
  const seen = catalog.requests.slice(before)
  t.ok(seen.length > 0, 'the table was read from the catalog')
  t.ok(seen.every(r => r.headers.authorization === undefined), 'without the admin JWT: it was issued for iceguard, not for the catalog')
})
