/**
 * The canonical request target (src/edge/request-target.ts) and the triage built on it
 * (src/edge/classify.ts), table-driven: what is refused, what is decoded, what is kept, which
 * route each spelling is, and what target is forwarded for it.
 */
import t from 'tap'
import fc from 'fast-check'
import { canonicalTarget } from '../../../src/edge/request-target.js'
import { classifyRequest, decodePathSegment } from '../../../src/edge/classify.js'

t.test('canonicalTarget: already canonical targets come back as the same string', async t => {
  for (const raw of [
    '/v1/namespaces/db/tables/t',
    '/v1/config?warehouse=my+wh',
    '/v1/namespaces/db/tables/t?snapshots=refs&x=%7E+/../..#',
    '/v1/namespaces/a%1Fb%20c/tables/x%2Fy',
    '/v1/namespaces/db/tables/t.v1',
    '/v1/namespaces/db/tables/...',
    '/v1/namespaces/%2561/tables/%25',
    '/v1/namespaces/db/tables/it\'s(*)!$&,=:@'
  ]) {
    const out = canonicalTarget(raw.replace(/#$/, ''))
    t.equal(out, raw.replace(/#$/, ''), raw)
  }
})

t.test('canonicalTarget: percent-encoded unreserved characters are decoded, in the path only', async t => {
  const cases: Array<[string, string]> = [
    ['/v1/namespaces/db/tables/a%7Eb', '/v1/namespaces/db/tables/a~b'],
    ['/v1/namespaces/db/tables/a%7eb', '/v1/namespaces/db/tables/a~b'],
    ['/v1/n%61mespaces/db/t%61bles/t', '/v1/namespaces/db/tables/t'],
    ['/v%31/namespaces', '/v1/namespaces'],
    ['/v1/namespaces/%41%5A%30%39%2D%2E%5F%7E', '/v1/namespaces/AZ09-._~'],
    ['/v1/namespaces/db/tables/t%7E?q=%7E', '/v1/namespaces/db/tables/t~?q=%7E'],
    // Reserved and other characters stay encoded: %2F is still one segment, %25 a percent sign.
    ['/v1/namespaces/a%2Fb%61/tables/%2561', '/v1/namespaces/a%2Fba/tables/%2561'],
    ['/v1/namespaces/%C3%A9%61', '/v1/namespaces/%C3%A9a'],
    // A raw `+` (the Java client's space) is written as %20 in the path, kept in the query.
    ['/v1/namespaces/db/tables/a+b', '/v1/namespaces/db/tables/a%20b'],
    ['/v1/my+wh/namespaces/sales+eu/tables/t%7E+?q=a+b', '/v1/my%20wh/namespaces/sales%20eu/tables/t~%20?q=a+b'],
    ['/v1/namespaces/a%2B+b', '/v1/namespaces/a%2B%20b']
  ]
  for (const [raw, want] of cases) t.equal(canonicalTarget(raw), want, raw)
})

t.test('canonicalTarget: refusals name the problem', async t => {
  const cases: Array<[string, RegExp]> = [
    ['*', /not an absolute path/],
    ['http://x/v1/namespaces', /not an absolute path/],
    ['/v1/namespaces/db/tables/t#/x', /fragment/],
    ['/v1/transactions/commit#', /fragment/],
    ['/v1/namespaces/db?x=1#y', /fragment/],
    ['/v1/namespaces/db\\tables', /backslash/],
    ['/v1/namespaces/db/tables/t;jsessionid=1', /";" path parameter/],
    ['/v1/namespaces;x/db', /";" path parameter/],
    ['/v1//namespaces', /empty segment/],
    ['/v1/namespaces/db/tables/t/', /ends with "\/"/],
    ['/v1/namespaces/db/?x', /ends with "\/"/],
    ['/v1/namespaces/%zz', /malformed percent escape \("%zz"\)/],
    ['/v1/namespaces/%2', /malformed percent escape/],
    ['/v1/namespaces/%', /malformed percent escape/],
    ['/v1/namespaces/%4g', /malformed percent escape/],
    ['/v1/../admin', /dot segment \(".."\)/],
    ['/v1/./namespaces', /dot segment/],
    ['/v1/namespaces/..', /dot segment/],
    ['/v1/namespaces/%2e%2e/x', /dot segment/],
    ['/v1/namespaces/%2E/x', /dot segment/],
    ['/v1/namespaces/.%2e/x', /dot segment/],
    ['/v1/namespaces/%252e%252e/x', /dot segment/],
    ['/v1/namespaces/%25252e/x', /dot segment/],
    ['/v1/namespaces/a%2F..%2Fb/tables/t', /dot segment/],
    ['/v1/namespaces/..%5Cadmin/tables/t', /dot segment/],
    ['/v1/namespaces/..%3Bx/tables/t', /dot segment/],
    ['/v1/namespaces/a\x01b', /control character/],
    ['/v1/namespaces/a\x7fb', /control character/],
    ['/v1/namespaces/a b', /control character, a space/],
    ['/v1/namespaces/\u00e9', /outside ASCII/],
    ['/v1/namespaces/db?x=\u00ff', /outside ASCII/]
  ]
  for (const [raw, why] of cases) {
    const out = canonicalTarget(raw)
    t.ok(typeof out === 'object', `${JSON.stringify(raw)} is refused`)
    if (typeof out === 'object') t.match(out.refused, why, JSON.stringify(raw))
  }
})

t.test('canonicalTarget: total, and a fixed point', async t => {
  const piece = fc.oneof(
    fc.constantFrom('v1', 'V1', 'namespaces', 'tables', '%61', '%7E', '%2e', '%2E%2e', '%252e', '%2F', '%1F', '%', '%zz', '+', ';x', '#', '\\', '.', '..', '', '?', 'a b', '\u00e9'),
    fc.webSegment()
  )
  fc.assert(fc.property(fc.array(piece, { maxLength: 7 }), (parts) => {
    const raw = `/${parts.join('/')}`
    const out = canonicalTarget(raw)
    if (typeof out === 'object') return typeof out.refused === 'string' && out.refused.length > 0
    // Canonical once is canonical: a second pass changes nothing.
    return canonicalTarget(out) === out
  }), { numRuns: 2000 })
  t.pass('never throws; the canonical form is stable')
})

type Expect = Record<string, unknown>

t.test('classifyRequest: kinds, identifiers and the target forwarded', async t => {
  const cases: Array<[string, string, string, Expect?]> = [
    ['GET', '/v1/config', 'config', { target: '/v1/config' }],
    ['GET', '/v1/config?warehouse=my+wh', 'config', { target: '/v1/config?warehouse=my+wh' }],
    ['GET', '/V1/CONFIG?warehouse=W', 'config', { target: '/v1/config?warehouse=W' }],
    ['GET', '/v1/c%6Fnfig', 'config', { target: '/v1/config' }],
    ['GET', '/v1/namespaces/db/tables/t', 'passthrough', { operationId: undefined, target: '/v1/namespaces/db/tables/t' }],
    ['GET', '/v1/NameSpaces/Db/TABLES/MyTable', 'passthrough', { target: '/v1/namespaces/Db/tables/MyTable' }],
    ['HEAD', '/v1/p/namespaces/db/views/v', 'passthrough', { target: '/v1/p/namespaces/db/views/v' }],
    ['HEAD', '/v1/p/NAMESPACES/db/views/V', 'passthrough', { target: '/v1/p/namespaces/db/views/V' }],
    ['GET', '/v1/namespaces/db/some/vendor/read', 'passthrough', { operationId: undefined, target: '/v1/namespaces/db/some/vendor/read' }],
    ['GET', '/V1/vendor/X', 'passthrough', { target: '/v1/vendor/X' }],
    ['POST', '/v1/namespaces/db/tables/t', 'update-table', { namespace: ['db'], table: 't', prefix: undefined, target: '/v1/namespaces/db/tables/t' }],
    ['POST', '/v1/namespaces/db/TABLES/t', 'update-table', { table: 't', target: '/v1/namespaces/db/tables/t' }],
    ['POST', '/v1/NAMESPACES/db/tables/t', 'update-table', { target: '/v1/namespaces/db/tables/t' }],
    ['POST', '/v1/namespaces/db/t%61bles/t', 'update-table', { target: '/v1/namespaces/db/tables/t' }],
    ['POST', '/v%31/namespaces/db/tables/t', 'update-table', { target: '/v1/namespaces/db/tables/t' }],
    ['POST', '/v1/cat/namespaces/db/tables/t', 'update-table', { namespace: ['db'], table: 't', prefix: 'cat' }],
    ['POST', '/v1/my%20wh/namespaces/a%1Fb%20c/tables/x%20y?x=1', 'update-table', { namespace: ['a', 'b c'], table: 'x y', prefix: 'my wh', target: '/v1/my%20wh/namespaces/a%1Fb%20c/tables/x%20y?x=1' }],
    ['POST', '/v1/namespaces/a%1fb/tables/x%2Fy', 'update-table', { namespace: ['a', 'b'], table: 'x/y' }],
    ['POST', '/v1/namespaces/db/tables/a%2Bb', 'update-table', { table: 'a+b' }],
    // The Java client writes a space as `+`: judged as a space, forwarded as %20, which every
    // catalog reads as a space.
    ['POST', '/v1/namespaces/db/tables/a+b', 'update-table', { table: 'a b', target: '/v1/namespaces/db/tables/a%20b' }],
    ['POST', '/v1/my+wh/namespaces/sales+eu/tables', 'create-table', { prefix: 'my wh', namespace: ['sales eu'], target: '/v1/my%20wh/namespaces/sales%20eu/tables' }],
    ['POST', '/v1/namespaces/a+b/register-view', 'register-view', { namespace: ['a b'] }],
    ['POST', '/v1/namespaces/db/views/a+b', 'update-view', { table: 'a b' }],
    // Java's URLEncoder writes `~` as %7E: forwarded decoded, judged as `~`.
    ['POST', '/v1/namespaces/db/tables/a%7Eb', 'update-table', { table: 'a~b', target: '/v1/namespaces/db/tables/a~b' }],
    ['POST', '/v1/transactions/commit', 'transaction', { target: '/v1/transactions/commit' }],
    ['POST', '/v1/TRANSACTIONS/commit', 'transaction', { target: '/v1/transactions/commit' }],
    ['POST', '/v1/transactions/COMMIT', 'transaction', { target: '/v1/transactions/commit' }],
    ['POST', '/v1/transactions/c%6fmmit', 'transaction', { target: '/v1/transactions/commit' }],
    ['POST', '/v1/p/transactions/commit', 'transaction', { prefix: 'p' }],
    ['POST', '/v1/namespaces/db/tables', 'create-table', { namespace: ['db'] }],
    ['POST', '/v1/namespaces/db/TABLES', 'create-table', { target: '/v1/namespaces/db/tables' }],
    ['POST', '/v1/p/namespaces/db/tables', 'create-table', { namespace: ['db'], prefix: 'p' }],
    ['POST', '/v1/namespaces/db/register', 'register-table'],
    ['POST', '/v1/namespaces/db/REGISTER', 'register-table', { target: '/v1/namespaces/db/register' }],
    ['POST', '/v1/namespaces/db/register-view', 'register-view', { namespace: ['db'] }],
    ['POST', '/v1/p/namespaces/db/Register-View', 'register-view', { prefix: 'p', target: '/v1/p/namespaces/db/register-view' }],
    ['POST', '/v1/namespaces/db/views', 'create-view'],
    ['POST', '/v1/p/namespaces/db/views/v', 'update-view', { table: 'v', prefix: 'p' }],
    ['POST', '/v1/p/namespaces/db/VIEWS/v', 'update-view', { table: 'v', target: '/v1/p/namespaces/db/views/v' }],
    ['POST', '/v1/namespaces', 'passthrough', { operationId: 'createNamespace' }],
    ['POST', '/v1/p/namespaces', 'passthrough', { operationId: 'createNamespace' }],
    ['POST', '/v1/namespaces/db/properties', 'passthrough', { operationId: 'updateProperties' }],
    ['POST', '/v1/tables/rename', 'rename-table', { operationId: 'renameTable' }],
    ['POST', '/v1/p/views/rename', 'rename-view', { operationId: 'renameView', prefix: 'p' }],
    ['DELETE', '/v1/namespaces/db/views/v', 'drop-view', { operationId: 'dropView', table: 'v' }],
    ['POST', '/v1/namespaces/db/tables/t/metrics', 'passthrough', { operationId: 'reportMetrics' }],
    ['POST', '/v1/namespaces/db/tables/t/plan', 'passthrough', { operationId: 'planTableScan' }],
    ['POST', '/v1/oauth/tokens', 'passthrough', { operationId: 'getToken' }],
    ['POST', '/v1/aws/s3/sign', 'passthrough', { operationId: 'signRequest' }],
    ['DELETE', '/v1/namespaces/db/tables/t', 'drop-table', { operationId: 'dropTable', table: 't', namespace: ['db'] }],
    ['DELETE', '/v1/namespaces/db/tables/t/plan/p1', 'passthrough', { operationId: 'cancelPlanning' }],
    // Reads and pass-through writes name the same table as the gated writes: `+` is %20 there too.
    ['DELETE', '/v1/namespaces/db/tables/a+b', 'drop-table', { target: '/v1/namespaces/db/tables/a%20b', table: 'a b' }],
    ['GET', '/v1/my+wh/namespaces/db/tables/a+b', 'passthrough', { target: '/v1/my%20wh/namespaces/db/tables/a%20b' }],
    // A prefix spelled like a route word: one reading only, so no doubt.
    ['POST', '/v1/namespaces/namespaces/tables', 'create-table', { namespace: ['namespaces'], prefix: undefined }],
    ['POST', '/v1/namespaces/namespaces/db/tables', 'create-table', { namespace: ['db'], prefix: 'namespaces' }],
    ['POST', '/v1/namespaces/transactions/commit', 'transaction', { prefix: 'namespaces' }],
    // iceguard's own routes.
    ['POST', '/admin/v1/validate', 'local'],
    ['GET', '/healthz', 'local'],
    ['GET', '/docs/', 'local'],
    ['GET', '/v1', 'local'],
    ['POST', '/v2/namespaces/db/tables/t', 'local'],
    ['POST', '/v1x/namespaces/db/tables/t', 'local']
  ]
  for (const [method, path, kind, extra] of cases) {
    const got = classifyRequest(method, path)
    t.equal(got.kind, kind, `${method} ${path} is ${kind}${got.message !== undefined ? ` (${got.message})` : ''}`)
    for (const [k, v] of Object.entries(extra ?? {})) t.same((got as unknown as Record<string, unknown>)[k], v, `${method} ${path}: ${k}`)
  }
})

t.test('classifyRequest: deny by default, and what else is refused', async t => {
  const cases: Array<[string, string, RegExp, boolean?]> = [
    ['POST', '/v1/namespaces/db/things', /not a route of the Iceberg REST API/],
    ['POST', '/v1/config', /not a route/],
    ['POST', '/v1/namespaces/db/tables/t/unknown', /not a route/],
    ['POST', '/v1/namespaces/db/tables/t%2561', /./, false],
    ['PUT', '/v1/namespaces/db/tables/t', /^Cannot forward PUT \/v1\/namespaces\/db\/tables\/t: not a route/],
    ['PATCH', '/v1/namespaces/db/tables/t', /not a route/],
    ['DELETE', '/v1/transactions/commit', /not a route/],
    ['OPTIONS', '/v1/namespaces', /not a route/],
    ['POST', '/v1/namespaces/db/t%2561bles/t', /not a route/],
    ['GET', '/v1/namespaces/db/tables/t', /GET request must not carry a body/, true],
    ['HEAD', '/v1/namespaces/db/tables/t', /HEAD request must not carry a body/, true],
    ['POST', '*', /not an absolute path/],
    ['GET', 'http://upstream/v1/config', /not an absolute path/],
    ['POST', '/v1/namespaces/db/tables/t#/x', /fragment/],
    ['POST', '/V1/namespaces/db/tables/t#/x', /fragment/],
    ['POST', '/v1#/namespaces/db/tables/t', /fragment/],
    ['POST', '/v1;x/namespaces/db/tables/t', /path parameter/],
    ['POST', '//v1/namespaces/db/tables/t', /empty segment/],
    ['POST', '/v1/namespaces/db/tables/t/', /ends with/],
    ['POST', '/v1/x/../namespaces/db/tables/t', /dot segment/],
    ['GET', '/v1/namespaces/%2e%2e/config', /dot segment/],
    ['POST', '/v1/namespaces/db/tables/%FF', /does not decode to UTF-8/],
    ['POST', '/v1/namespaces/namespaces/tables/tables', /reads as updateTable without a prefix and as createTable with prefix "namespaces"/]
  ]
  for (const [method, path, why, body] of cases) {
    const got = classifyRequest(method, path, body === true)
    if (body === false) {
      // Double encoding is not decoded: an ordinary name, judged as such.
      t.equal(got.kind, 'update-table', `${method} ${path}: %2561 is a name`)
      t.equal(got.table, 't%61')
      continue
    }
    t.equal(got.kind, 'refused', `${method} ${path} is refused`)
    t.match(got.message, why, `${method} ${path}: ${got.message ?? ''}`)
    t.match(got.message, /nothing was forwarded$/, 'says nothing was forwarded')
    t.equal(got.target, path, 'the target is left as received')
  }
  // GET and HEAD without a body, and DELETE with one, are not refused for it.
  t.equal(classifyRequest('GET', '/v1/namespaces', false).kind, 'passthrough')
  t.equal(classifyRequest('DELETE', '/v1/namespaces/db', true).kind, 'passthrough')
})

t.test('classifyRequest: total on arbitrary targets and methods', async t => {
  const methods = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE')
  const kinds = new Set<string>()
  fc.assert(fc.property(methods, fc.string(), fc.boolean(), (m, p, body) => {
    const got = classifyRequest(m, '/v1/' + p, body)
    kinds.add(got.kind)
    if (got.kind === 'refused') return typeof got.message === 'string'
    // Whatever is not refused is forwarded as a canonical target that classifies the same way.
    const again = classifyRequest(m, got.target, body)
    return again.kind === got.kind && again.target === got.target
  }), { numRuns: 2000 })
  t.ok(kinds.has('refused') && kinds.has('passthrough'), `reaches refusals and pass-through (${[...kinds].join(', ')})`)
})

t.test('decodePathSegment: percent-decoding only; bad UTF-8 is undefined', async t => {
  t.equal(decodePathSegment('a+b'), 'a+b')
  t.equal(decodePathSegment('a%20b'), 'a b')
  t.equal(decodePathSegment('a%2Bb'), 'a+b')
  t.equal(decodePathSegment('%C3%A9'), '\u00e9')
  t.equal(decodePathSegment('%FF'), undefined)
})
