/**
 * Spellings of every write the gate judges, generated the way an attacker (or a lenient router)
 * would spell them: route words in any case, unreserved characters percent-encoded, fragments, dot
 * segments raw and encoded, doubled slashes, `;params`, trailing slashes, with and without
 * `{prefix}`. Each carries a change the policy refuses and is sent on both transports. Router
 * models (test/helpers/router-models.ts) say which spellings a real catalog would apply as a
 * write; for those above all, and in fact for every spelling, the recording upstream must receive
 * nothing but the gate's own base-load GETs, and the client a 4xx.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import fc from 'fast-check'
import { startProxy, startRecordingUpstream } from '../helpers/index.js'
import { fixtureMeta, fixtureResponder } from '../helpers/fault-upstream.js'
import { exchange, TRANSPORTS } from '../helpers/raw-http.js'
import { ROUTER_MODELS } from '../helpers/router-models.js'

const meta = fixtureMeta()
const fields = (meta.schemas as Array<{ fields: Array<Record<string, unknown>> }>)[0]!.fields
/** `id` long -> string: TYPE_PROMOTION_VALID refuses it. */
// An evolution, as every client pins one: the table and its current schema (without
// assert-current-schema-id, a new schema on a table with no snapshot reads as a replace).
const retyped = {
  requirements: [{ type: 'assert-table-uuid', uuid: meta['table-uuid'] }, { type: 'assert-current-schema-id', 'current-schema-id': meta['current-schema-id'] }],
  updates: [
    { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, 'identifier-field-ids': [1], fields: fields.map(f => f.name === 'id' ? { ...f, type: 'string' } : f) } },
    { action: 'set-current-schema', 'schema-id': -1 }
  ]
}
/** One field id twice: FIELD_ID_UNIQUE refuses it wherever a schema arrives. */
const twiceId = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'a', required: false, type: 'int' }, { id: 1, name: 'b', required: false, type: 'int' }] }
const viewVersion = { 'version-id': 1, 'schema-id': 0, 'timestamp-ms': 1, summary: {}, representations: [{ type: 'sql', sql: 'select 1', dialect: 'spark' }], 'default-namespace': ['db'] }

interface WriteCase {
  readonly operationId: string
  /** Segments after `/v1/{prefix}/`; identifiers are `db`, `t`, `v`. */
  readonly words: readonly string[]
  readonly body: unknown
  /** What the gate's refusal names (the rule), proving the write was judged and not only triaged. */
  readonly judged: RegExp
}

const CASES: readonly WriteCase[] = [
  { operationId: 'updateTable', words: ['namespaces', 'db', 'tables', 't'], body: retyped, judged: /TYPE_PROMOTION_VALID/ },
  { operationId: 'commitTransaction', words: ['transactions', 'commit'], body: { 'table-changes': [{ identifier: { namespace: ['db'], name: 't' }, ...retyped }] }, judged: /TYPE_PROMOTION_VALID/ },
  { operationId: 'createTable', words: ['namespaces', 'db', 'tables'], body: { name: 'n', schema: twiceId }, judged: /FIELD_ID_UNIQUE/ },
  { operationId: 'registerTable', words: ['namespaces', 'db', 'register'], body: { name: 'n', 'metadata-location': 's3://w/db/n/metadata/00000.json' }, judged: /TABLE_NO_REGISTER/ },
  { operationId: 'createView', words: ['namespaces', 'db', 'views'], body: { name: 'v', schema: twiceId, 'view-version': viewVersion, properties: {} }, judged: /FIELD_ID_UNIQUE/ },
  { operationId: 'replaceView', words: ['namespaces', 'db', 'views', 'v'], body: { requirements: [], updates: [{ action: 'add-schema', schema: { ...twiceId, 'schema-id': 1 } }] }, judged: /FIELD_ID_UNIQUE/ },
  { operationId: 'registerView', words: ['namespaces', 'db', 'register-view'], body: { name: 'n', 'metadata-location': 's3://w/db/n/metadata/00000.json' }, judged: /TABLE_NO_REGISTER/ }
]
const IDENTIFIERS = new Set(['db', 't', 'v', 'wh'])

const hex = (c: string, upper: boolean): string => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0')
  return `%${upper ? h.toUpperCase() : h}`
}

/**
 * A word as written (most often), or with its case varied (route words only), some characters
 * percent-encoded in either hex case, or both.
 */
function spellWord (word: string, routeWord: boolean): fc.Arbitrary<string> {
  const style = fc.constantFrom(...(routeWord ? ['plain', 'plain', 'plain', 'case', 'encoded', 'both'] : ['plain', 'plain', 'plain', 'encoded']))
  const picks = fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length })
  return fc.tuple(style, picks, picks, fc.boolean()).map(([how, upper, encode, upperHex]) => [...word].map((c, i) => {
    const cased = (how === 'case' || how === 'both') && upper[i] === true ? c.toUpperCase() : c
    return (how === 'encoded' || how === 'both') && encode[i] === true ? hex(cased, upperHex) : cased
  }).join(''))
}

type Mutation = 'fragment' | 'dot' | 'dot-pair' | 'encoded-dot' | 'double-slash' | 'param' | 'trailing-slash' | 'query'
const MUTATIONS: readonly Mutation[] = ['fragment', 'dot', 'dot-pair', 'encoded-dot', 'double-slash', 'param', 'trailing-slash', 'query']
const ENCODED_DOTS = ['%2e', '%2E', '.%2e', '%2e%2e', '%2E%2E', '%252e%252e', '%252E']

/** Applies structural mutations to spelled segments (positions taken modulo the length). */
function mutate (segments: string[], mutations: ReadonlyArray<{ kind: Mutation, at: number, pick: number }>): string {
  const segs = [...segments]
  let suffix = ''
  let query = ''
  for (const { kind, at, pick } of mutations) {
    const i = at % segs.length
    switch (kind) {
      case 'fragment': suffix += ['#', '#/x', '#/../y', '#?a=1'][pick % 4]; break
      case 'dot': segs.splice(i, 0, pick % 2 === 0 ? '.' : '..'); break
      case 'dot-pair': segs.splice(i, 0, 'x', '..'); break
      case 'encoded-dot': segs.splice(i, 0, ENCODED_DOTS[pick % ENCODED_DOTS.length] as string); break
      case 'double-slash': segs.splice(i, 0, ''); break
      case 'param': segs[i] = `${segs[i] as string};x=${pick % 3}`; break
      case 'trailing-slash': suffix = `/${suffix}`; break
      case 'query': query = '?purge=false'; break
    }
  }
  return `/${segs.join('/')}${suffix.startsWith('/') ? suffix : ''}${query}${suffix.startsWith('/') ? suffix.slice(1) : suffix}`
}

const spelling = fc.record({
  kase: fc.constantFrom(...CASES),
  prefixed: fc.boolean(),
  seed: fc.nat()
}).chain(({ kase, prefixed }) => {
  const words = ['v1', ...(prefixed ? ['wh'] : []), ...kase.words]
  return fc.record({
    kase: fc.constant(kase),
    prefixed: fc.constant(prefixed),
    spelled: fc.tuple(...words.map(w => spellWord(w, !IDENTIFIERS.has(w)))),
    mutations: fc.array(fc.record({ kind: fc.constantFrom(...MUTATIONS), at: fc.nat({ max: 7 }), pick: fc.nat({ max: 11 }) }), { maxLength: 2 })
  })
})

t.test('no generated spelling of a gated write reaches the upstream unjudged, on either transport', async t => {
  const up = await startRecordingUpstream(t, fixtureResponder)
  const dir = t.testdir({})
  const policy = join(dir, 'policy.yaml')
  writeFileSync(policy, 'version: 1\nextends: builtin:spec\nrules:\n  TABLE_NO_REGISTER: error\n')
  const proxy = await startProxy(t, { upstream: up.url, policy })
  const port = Number(new URL(proxy.url).port)

  const routedBy: Record<string, number> = Object.fromEntries(Object.keys(ROUTER_MODELS).map(m => [m, 0]))
  let writes = 0
  let judged = 0
  let runs = 0
  await fc.assert(fc.asyncProperty(spelling, async ({ kase, spelled, mutations }) => {
    runs++
    const target = mutate(spelled, mutations)
    const routers = Object.entries(ROUTER_MODELS).filter(([, model]) => model(target) !== undefined).map(([name]) => name)
    for (const name of routers) routedBy[name] = (routedBy[name] ?? 0) + 1
    if (routers.length > 0) writes++
    for (const { transport, name } of TRANSPORTS) {
      const before = up.requests.length
      const answer = await exchange(port, transport, { method: 'POST', target, body: JSON.stringify(kase.body) })
      const arrived = up.requests.slice(before).filter(r => !(r.method === 'GET' && r.url.startsWith('/v1/config')))
      const what = `${kase.operationId} as POST ${JSON.stringify(target)} on the ${name} (routed as a write by: ${routers.join(', ') || 'none'})`
      // Only the gate's own base load may arrive: a GET of the table, never the write.
      const unjudged = arrived.filter(r => !(r.method === 'GET' && /\/tables\/t\?snapshots=refs$/.test(r.url)))
      if (unjudged.length > 0) throw new Error(`${what}: the upstream received ${unjudged.map(r => `${r.method} ${r.url}`).join(', ')}`)
      if (answer.status < 400 || answer.status >= 500) throw new Error(`${what}: answered ${answer.status}, not a 4xx: ${answer.body}`)
      const error = (JSON.parse(answer.body) as { error?: { code?: number, message?: string } }).error
      if (error?.code !== answer.status || typeof error.message !== 'string') throw new Error(`${what}: no ErrorModel: ${answer.body}`)
      // Without structural damage the spelling is a route: the gate judged it (its refusal names the rule).
      if (mutations.length === 0) {
        if (!kase.judged.test(error.message)) throw new Error(`${what}: not judged by the gate: ${error.message}`)
        judged++
      }
    }
    return true
  }), { numRuns: 150 })
  t.equal(runs, 150, 'every spelling was sent')
  t.ok(writes >= 30, `${writes} of ${runs} spellings would be applied as a write by some router`)
  for (const [model, count] of Object.entries(routedBy)) t.ok(count > 0, `${model} routes ${count} of them as writes`)
  t.ok(judged > 0, `${judged} exchanges of route spellings were judged by the gate and refused by policy`)
  t.equal(up.requests.filter(r => r.method !== 'GET').length, 0, 'no write reached the upstream')
})

t.test('the router models route what their sources say', async t => {
  const { restFixture, quarkus, axum } = ROUTER_MODELS as Record<string, (target: string) => string | undefined>
  const cases: Array<[string, string | undefined, string | undefined, string | undefined]> = [
    // target, REST fixture, Quarkus, axum
    ['/v1/namespaces/db/tables/t', 'updateTable', 'updateTable', 'updateTable'],
    ['/v1/namespaces/db/TABLES/t', 'updateTable', undefined, undefined],
    ['/v1/namespaces/db/t%61bles/t', undefined, 'updateTable', undefined],
    ['/v1/namespaces/db/tables/t#/x', undefined, 'updateTable', 'updateTable'],
    ['/v1/wh/namespaces/db/tables/t', undefined, 'updateTable', 'updateTable'],
    ['/v1/namespaces/db/register-view', 'registerView', 'registerView', 'registerView'],
    ['/v1/namespaces/db/tables;x/t', undefined, 'updateTable', undefined],
    ['/v1/namespaces/db/tables/t;x', 'updateTable', 'updateTable', 'updateTable'],
    ['/v1//namespaces/db/tables/t', undefined, 'updateTable', undefined],
    ['/v1/x/../namespaces/db/tables/t', 'updateTable', 'updateTable', undefined],
    ['/v1/x/%2e%2e/namespaces/db/tables/t', undefined, 'updateTable', undefined],
    ['/v1/namespaces/db/tables/t/', undefined, 'updateTable', undefined],
    ['/v1/TRANSACTIONS/commit', 'commitTransaction', undefined, undefined],
    ['/v1/namespaces/db/t%2561bles/t', undefined, undefined, undefined]
  ]
  for (const [target, fixture, vertx, hyper] of cases) {
    t.equal(restFixture!(target), fixture, `REST fixture: ${target}`)
    t.equal(quarkus!(target), vertx, `Quarkus: ${target}`)
    t.equal(axum!(target), hyper, `axum: ${target}`)
  }
})
