/**
 * Property-based fuzzing (fast-check, bounded runs so CI stays fast) of what reads untrusted
 * input: the commit scanner that lets data commits skip the gate, the gate's body reader, the
 * evolution engine, and the HTTP routes end to end.
 */
import fc from 'fast-check'
import t from 'tap'
import { Pool, request } from 'undici'
import { DATA_ACTIONS, needsGate } from '../../src/json/commit-scan.js'
import { parseCommitBody } from '../../src/json/parse-commit-body.js'
import { evaluateCommit, evaluateCreate } from '../../src/engine/evaluate-commit.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import { presetPolicy, resolvePolicy } from '../../src/policy/index.js'
import { SPEC_ONLY_SETTINGS } from '../../src/engine/rules/settings.js'
import { startProxy, startRecordingUpstream } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { onlyDataActions } from '../helpers/commit-scan-reference.js'
import { fixtureMeta, schemaCommitFor } from '../helpers/fault-upstream.js'

const SCHEMA_ACTIONS = ['add-schema', 'set-current-schema', 'add-spec', 'set-default-spec', 'add-sort-order',
  'set-default-sort-order', 'upgrade-format-version', 'remove-schemas', 'remove-partition-specs', 'add-view-version']

/** An action name as a client might dress it: any case, sometimes \u-escaped. */
const actionText = fc.tuple(fc.constantFrom(...DATA_ACTIONS, ...SCHEMA_ACTIONS, 'bogus'), fc.boolean(), fc.boolean())
  .map(([a, upper, escape]) => {
    const name = upper ? a.toUpperCase() : a
    return escape ? JSON.stringify(name).replace(/[a-z]/, c => `\\u00${c.charCodeAt(0).toString(16)}`) : JSON.stringify(name)
  })

/** A commit-like body as text: random updates with dressed actions, junk around them, sometimes broken. */
const commitText = fc.tuple(
  fc.array(fc.tuple(fc.constantFrom('"action"', '"Action"', '"ACTION"', '"act\\u0069on"', '"actions"'), actionText, fc.json({ maxDepth: 2 })), { maxLength: 4 }),
  fc.json({ maxDepth: 2 }),
  fc.constantFrom('', ' ', 'x', '}', '//', '\'')
).map(([updates, extra, tail]) => {
  const items = updates.map(([key, action, junk]) => `{${key}:${action},"junk":${junk}}`)
  return `{"requirements":[],"updates":[${items.join(',')}],"extra":${extra}}${tail}`
})

t.test('needsGate: never throws, and lets a body skip the gate only when it is strict JSON with data actions alone', async t => {
  const check = (raw: Buffer): boolean => {
    if (needsGate(raw)) return true
    // Skipping the gate: the upstream must read exactly data actions.
    return onlyDataActions(raw)
  }
  fc.assert(fc.property(commitText, text => check(Buffer.from(text))), { numRuns: 300 })
  fc.assert(fc.property(fc.json({ maxDepth: 4 }), text => check(Buffer.from(text))), { numRuns: 200 })
  fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), bytes => check(Buffer.from(bytes))), { numRuns: 200 })
  t.equal(needsGate(Buffer.from('{"updates":[{"action":"add-snapshot"}]}')), false, 'a data commit still skips the gate')
  t.equal(needsGate(Buffer.from('{"updates":[{\'action\':\'add-schema\'}]}')), true, 'single quotes are gated')
  t.equal(needsGate(Buffer.from('{"updates":[{action:"add-schema"}]}')), true, 'unquoted keys are gated')
  t.equal(needsGate(Buffer.from('{"updates":[]}\n{"updates":[{"action":"add-schema"}]}')), true, 'a second document is gated')
})

t.test('parseCommitBody: never throws, answers a standalone message, bounds depth', async t => {
  fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.json({ maxDepth: 5 }), commitText), text => {
    const r = parseCommitBody(Buffer.from(text))
    return r.ok || (typeof r.message === 'string' && r.message.startsWith('Cannot read request body'))
  }), { numRuns: 300 })
  fc.assert(fc.property(fc.integer({ min: 257, max: 30_000 }), fc.constantFrom('[', '{"a":'), (depth, open) => {
    const close = open === '[' ? ']' : '}'
    const r = parseCommitBody(Buffer.from(open.repeat(depth) + '1' + close.repeat(depth)))
    return !r.ok && /nesting deeper than/.test(r.message)
  }), { numRuns: 30 })
  t.pass('properties held')
})

/** Plausible-to-garbage schema JSON: structs, lists, maps, primitives, and random values where types go. */
const typeJson = fc.letrec(tie => ({
  type: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('int', 'long', 'string', 'boolean', 'date', 'timestamp', 'timestamptz', 'decimal(10,2)', 'decimal(40,2)', 'fixed[4]', 'uuid', 'variant', 'unknown', 'nope'),
    fc.record({ type: fc.constant('struct'), fields: fc.array(tie('field'), { maxLength: 4 }) }),
    fc.record({ type: fc.constant('list'), 'element-id': fc.integer({ min: -1, max: 30 }), element: tie('type'), 'element-required': fc.boolean() }),
    fc.record({ type: fc.constant('map'), 'key-id': fc.integer({ min: -1, max: 30 }), key: tie('type'), 'value-id': fc.integer({ min: -1, max: 30 }), value: tie('type'), 'value-required': fc.boolean() }),
    fc.jsonValue({ maxDepth: 1 })
  ),
  field: fc.record({
    id: fc.oneof(fc.integer({ min: -2, max: 40 }), fc.constant(2147483647), fc.jsonValue({ maxDepth: 0 })),
    name: fc.oneof(fc.constantFrom('id', 'name', 'ts', 'added', ''), fc.string({ maxLength: 5 })),
    required: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 0 })),
    type: tie('type'),
    'initial-default': fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined })
  }, { requiredKeys: ['id', 'name', 'required', 'type'] })
}))

const updateJson = fc.oneof(
  fc.record({ action: fc.constant('add-schema'), schema: fc.record({ type: fc.constant('struct'), 'schema-id': fc.integer({ min: -1, max: 3 }), fields: fc.array(typeJson.field, { maxLength: 6 }), 'identifier-field-ids': fc.option(fc.array(fc.integer({ min: 0, max: 10 }), { maxLength: 2 }), { nil: undefined }) }), 'last-column-id': fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }) }),
  fc.record({ action: fc.constant('set-current-schema'), 'schema-id': fc.oneof(fc.integer({ min: -2, max: 3 }), fc.jsonValue({ maxDepth: 0 })) }),
  fc.record({ action: fc.constant('add-spec'), spec: fc.record({ 'spec-id': fc.integer({ min: -1, max: 2 }), fields: fc.array(fc.record({ 'source-id': fc.integer({ min: 0, max: 6 }), 'field-id': fc.integer({ min: 999, max: 1002 }), name: fc.string({ maxLength: 3 }), transform: fc.constantFrom('identity', 'bucket[4]', 'day', 'void', 'x') }), { maxLength: 2 }) }) }),
  fc.record({ action: fc.constant('add-sort-order'), 'sort-order': fc.record({ 'order-id': fc.integer({ min: -1, max: 2 }), fields: fc.array(fc.record({ 'source-id': fc.integer({ min: 0, max: 6 }), transform: fc.constant('identity'), direction: fc.constantFrom('asc', 'desc'), 'null-order': fc.constantFrom('nulls-first', 'nulls-last') }), { maxLength: 2 }) }) }),
  fc.record({ action: fc.constantFrom('set-default-spec', 'set-default-sort-order', 'upgrade-format-version', 'remove-schemas', 'set-properties', 'add-snapshot', 'mystery'), 'spec-id': fc.integer({ min: -1, max: 2 }), 'sort-order-id': fc.integer({ min: -1, max: 2 }), 'format-version': fc.integer({ min: 0, max: 4 }), 'schema-ids': fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }) }),
  fc.jsonValue({ maxDepth: 2 })
)

const requirementJson = fc.oneof(
  fc.record({ type: fc.constant('assert-current-schema-id'), 'current-schema-id': fc.oneof(fc.integer({ min: -1, max: 2 }), fc.jsonValue({ maxDepth: 0 })) }),
  fc.record({ type: fc.constant('assert-last-assigned-field-id'), 'last-assigned-field-id': fc.integer({ min: 0, max: 5 }) }),
  fc.record({ type: fc.constantFrom('assert-table-uuid', 'assert-create', 'assert-ref-snapshot-id', 'bogus'), uuid: fc.string({ maxLength: 4 }) }),
  fc.jsonValue({ maxDepth: 1 })
)

const commitJson = fc.record({
  requirements: fc.oneof(fc.array(requirementJson, { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
  updates: fc.oneof(fc.array(updateJson, { maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }))
}, { requiredKeys: [] })

t.test('evaluateCommit / evaluateCreate: never throw on random requests, always a verdict', async t => {
  const base = parseTableMetadata(fixtureMeta()).metadata
  t.ok(base !== undefined, 'fixture metadata parses')
  const settings = [SPEC_ONLY_SETTINGS, resolvePolicy(presetPolicy('builtin:recommended'), { namespace: ['db'], name: 't' })]
  const verdicts = new Set<string>()
  fc.assert(fc.property(commitJson, fc.boolean(), fc.integer({ min: 0, max: 1 }), fc.constantFrom('table' as const, 'view' as const), (req, withBase, s, target) => {
    // Through the gate's own reader, so numbers arrive as they do in production (LosslessNumber).
    const parsed = parseCommitBody(Buffer.from(JSON.stringify(req)))
    if (!parsed.ok) return true
    const e = evaluateCommit({ base: withBase ? base : undefined, request: parsed.value as never, settings: settings[s]!, target })
    verdicts.add(e.verdict)
    return ['allow', 'warn', 'deny', 'conflict'].includes(e.verdict) && typeof e.explanation === 'string'
  }), { numRuns: 300 })
  fc.assert(fc.property(fc.record({ name: fc.string({ maxLength: 4 }), schema: fc.oneof(typeJson.type, fc.record({ type: fc.constant('struct'), fields: fc.array(typeJson.field, { maxLength: 5 }) })), properties: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }), (req) => {
    const parsed = parseCommitBody(Buffer.from(JSON.stringify(req)))
    if (!parsed.ok) return true
    const e = evaluateCreate({ request: parsed.value, settings: settings[1]! })
    return typeof e.verdict === 'string'
  }), { numRuns: 150 })
  t.ok(verdicts.has('deny') && verdicts.has('allow'), `the generator reaches both allow and deny (saw ${[...verdicts].join(', ')})`)
})

onEveryTransport(t, t => {
  t.test('HTTP routes: random paths and bodies never get a 5xx of the proxy\'s making, always an ErrorModel', async t => {
    const up = await startRecordingUpstream(t, (req, res) => {
      const body = req.method === 'GET' ? JSON.stringify({ 'metadata-location': 's3://w/m.json', metadata: fixtureMeta() }) : '{}'
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
      res.end(body)
    })
    const proxy = await startProxy(t, { upstream: `${up.url}/base`, policy: 'builtin:recommended', 'body-limit': '256KiB', env: { ICEGUARD_ADMIN_TOKEN: 'admin-token-for-fuzz' } })
    const segment = fc.oneof(
      fc.constantFrom('v1', 'namespaces', 'tables', 'views', 'transactions', 'commit', 'db', 't', 'config', 'register', '..', '.', '%2e%2e', '%2F', '%1F', '%', '%zz', '+', 'admin', 'validate', 'diff', 'rules', 'healthz', 'readyz', 'metrics', 'docs', ''),
      fc.webSegment()
    )
    const path = fc.oneof(
      fc.array(segment, { minLength: 1, maxLength: 7 }).map(s => `/${s.join('/')}`),
      fc.array(segment, { minLength: 0, maxLength: 4 }).map(s => `/v1/${s.join('/')}`),
      fc.constantFrom('/v1/namespaces/db/tables/t', '/v1/transactions/commit', '/v1/namespaces/db/tables', '/admin/v1/validate', '/admin/v1/diff', '/admin/v1/policy/reload', '/*/v1', '/admin/*/x')
    ).chain(p => fc.option(fc.webQueryParameters(), { nil: undefined }).map(q => q === undefined ? p : `${p}?${q}`))
    const body = fc.oneof(
      commitJson.map(c => JSON.stringify(c)),
      commitText,
      fc.json({ maxDepth: 3 }),
      fc.string({ maxLength: 200 }),
      fc.constant(JSON.stringify(schemaCommitFor(fixtureMeta()))),
      commitJson.map(c => JSON.stringify({ table: { namespace: ['db'], name: 't' }, request: c, metadata: fixtureMeta() }))
    )
    const raw = new Pool(proxy.url, { connections: 4 })
    t.teardown(() => raw.close())
    let answered = 0
    await fc.assert(fc.asyncProperty(fc.constantFrom('GET', 'POST', 'POST', 'POST', 'DELETE', 'HEAD', 'PUT'), path, body, fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
      async (method, p, b, contentType) => {
      // Through a Pool, so the path goes out as generated (a URL parser would resolve dot segments).
        const res = await raw.request({
          path: p,
          method: method as 'POST',
          body: method === 'GET' || method === 'HEAD' ? undefined : b,
          headers: { 'content-type': contentType, authorization: 'Bearer admin-token-for-fuzz' },
          headersTimeout: 20_000,
          bodyTimeout: 20_000
        })
        const text = await res.body.text()
        answered++
        if (res.statusCode >= 500) throw new Error(`${method} ${p} → ${res.statusCode}: ${text.slice(0, 300)}`)
        if (res.statusCode >= 400 && method !== 'HEAD') {
          const e = (JSON.parse(text) as { error?: { code?: unknown, type?: unknown, message?: unknown } }).error
          if (e?.code !== res.statusCode || typeof e.type !== 'string' || typeof e.message !== 'string') {
            throw new Error(`${method} ${p} → ${res.statusCode} without an ErrorModel: ${text.slice(0, 300)}`)
          }
        }
        return true
      }), { numRuns: 250 })
    t.equal(answered, 250, 'every request was answered')
    const health = await request(`${proxy.url}/healthz`)
    t.equal(health.statusCode, 200, 'the proxy is still up')
    await health.body.dump()
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')
  })
})
