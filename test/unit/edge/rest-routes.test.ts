/**
 * The route table (src/edge/rest-routes.ts) against the triage (src/edge/classify.ts): every
 * route is classified as the table says, with and without `{prefix}` and in any case of its route
 * words, and no write method on a known path falls through to the upstream unjudged.
 */
import t from 'tap'
import { classifyRequest, isWriteMethod, WRITE_KINDS } from '../../../src/edge/classify.js'
import { REST_ROUTES, SPEC_CHECKED, type RestRoute } from '../../../src/edge/rest-routes.js'

const SAMPLE: Record<string, string> = {
  prefix: 'wh',
  namespace: 'db%1Fsales',
  table: 'orders',
  view: 'daily',
  function: 'add_one',
  'plan-id': 'p-1'
}

/** The route's path with sample values; `prefix` false drops the optional `{prefix}` segment. */
function concrete (route: RestRoute, prefix: boolean, upper = false): string {
  return route.path.split('/').flatMap((part) => {
    if (part === '{prefix}') return prefix ? [SAMPLE.prefix as string] : []
    if (part.startsWith('{')) return [SAMPLE[part.slice(1, -1)] as string]
    return [upper ? part.toUpperCase() : part]
  }).join('/')
}

const expectedKind = (route: RestRoute): string =>
  route.treatment === 'gate' ? route.kind as string : route.treatment === 'config' ? 'config' : 'passthrough'

t.test('the table says which spec it was checked against', async t => {
  t.match(SPEC_CHECKED, /rest-catalog-open-api\.yaml at commit [0-9a-f]{12}/)
})

t.test('the table is consistent', async t => {
  for (const route of REST_ROUTES) {
    t.equal(route.treatment === 'gate', route.kind !== undefined, `${route.operationId}: a kind exactly when gated`)
    if (route.treatment === 'read' || route.treatment === 'config') t.notOk(isWriteMethod(route.method), `${route.operationId} is GET or HEAD`)
    else t.ok(isWriteMethod(route.method), `${route.operationId} is a write method`)
  }
  const keys = REST_ROUTES.map(r => `${r.method} ${r.path}`)
  t.equal(new Set(keys).size, keys.length, 'each method and path once')
  const gatedKinds = new Set(REST_ROUTES.flatMap(r => r.kind === undefined ? [] : [r.kind]))
  t.same([...gatedKinds].sort(), [...WRITE_KINDS].sort(), 'the gated kinds are the kinds whose bodies are read')
  const gatedOps = REST_ROUTES.filter(r => r.treatment === 'gate').map(r => r.operationId).sort()
  t.same(gatedOps, ['commitTransaction', 'createTable', 'createView', 'dropTable', 'dropView', 'registerTable', 'registerView', 'renameTable', 'renameView', 'replaceView', 'updateTable'],
    'every write that installs or replaces metadata, and every drop or rename a view may depend on, is gated')
})

t.test('every route is classified as the table says, in every spelling a catalog routes alike', async t => {
  for (const route of REST_ROUTES) {
    const spellings = route.path.includes('{prefix}') ? [true, false] : [false]
    for (const prefix of spellings) {
      for (const upper of [false, true]) {
        const path = concrete(route, prefix, upper)
        const got = classifyRequest(route.method, path)
        t.equal(got.kind, expectedKind(route), `${route.method} ${path}: ${expectedKind(route)}${got.message !== undefined ? ` (${got.message})` : ''}`)
        // Reads are forwarded without a lookup when already canonical: only writes and config are named.
        t.equal(got.operationId, route.treatment === 'read' ? undefined : route.operationId, `${route.method} ${path}: ${route.operationId}`)
        t.equal(got.target, concrete(route, prefix), `${route.method} ${path}: forwarded with its route words in lower case`)
        if (route.treatment === 'gate') {
          t.same(got.prefix, prefix ? SAMPLE.prefix : undefined, `${route.operationId}: prefix`)
          if (route.path.includes('{namespace}')) t.same(got.namespace, ['db', 'sales'], `${route.operationId}: namespace levels`)
          const name = route.path.endsWith('{table}') ? 'orders' : route.path.endsWith('{view}') ? 'daily' : undefined
          t.equal(got.table, name, `${route.operationId}: table or view name`)
        }
      }
    }
  }
})

t.test('no write method on a known path falls through', async t => {
  const methods = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPPATCH', 'MERGE']
  const paths = new Set(REST_ROUTES.flatMap(r => r.path.includes('{prefix}') ? [concrete(r, true), concrete(r, false)] : [concrete(r, false)]))
  let refused = 0
  for (const path of paths) {
    for (const method of methods) {
      const route = REST_ROUTES.find(r => r.method === method && (concrete(r, true) === path || concrete(r, false) === path))
      const got = classifyRequest(method, path)
      if (route === undefined) {
        t.equal(got.kind, 'refused', `${method} ${path}: refused`)
        refused++
      } else {
        t.equal(got.kind, expectedKind(route), `${method} ${path}: ${route.operationId}`)
      }
      // Trailing segments and other spellings of a known path are not known paths.
      const longer = classifyRequest(method, `${path}/x`)
      if (!REST_ROUTES.some(r => r.method === method && (concrete(r, true).startsWith(path + '/') || concrete(r, false).startsWith(path + '/')))) {
        t.equal(longer.kind, 'refused', `${method} ${path}/x: refused`)
      }
    }
  }
  t.ok(refused > paths.size, `${refused} method and path pairs refused`)
})

t.test('no two routes of a method can match the same path in one reading', async t => {
  const words = (r: RestRoute): string[] => r.path.split('/').slice(2).filter(p => p !== '{prefix}')
  for (const a of REST_ROUTES) {
    for (const b of REST_ROUTES) {
      if (a === b || a.method !== b.method) continue
      const wa = words(a)
      const wb = words(b)
      if (wa.length !== wb.length) continue
      const overlap = wa.every((w, i) => w.startsWith('{') || (wb[i] as string).startsWith('{') || w === wb[i])
      t.notOk(overlap, `${a.operationId} and ${b.operationId} are told apart by a route word`)
    }
  }
})
