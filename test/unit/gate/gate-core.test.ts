import { ruleLinkBase } from '../../../src/gate/rule-link-base.js'
import t from 'tap'
import { stringify } from 'lossless-json'
import { parseCommitBody } from '../../../src/json/parse-commit-body.js'
import { describeRequirement, missingRequirements, type MissingRequirement } from '../../../src/gate/inject-requirements.js'
import { spliceRequirements } from '../../../src/json/splice-requirements.js'
import { findingLine } from '../../../src/engine/decide.js'
import { rejection, warningsHeader } from '../../../src/gate/gate-answers.js'
import { principalFromHeaders, fingerprint } from '../../../src/audit/principal.js'
import { memoryAuditSink, pinoAuditSink } from '../../../src/audit/audit-log.js'
import type { TableMetadata } from '../../../src/iceberg/types.js'

const BIG = '3055729675574597004'

const base: TableMetadata = {
  formatVersion: 2,
  lastColumnId: 3,
  schemas: [{ schemaId: 0, identifierFieldIds: [], struct: { kind: 'struct', fields: [] } }],
  currentSchemaId: 0,
  partitionSpecs: [{ specId: 0, fields: [] }],
  defaultSpecId: 0,
  sortOrders: [{ orderId: 0, fields: [] }],
  defaultSortOrderId: 0,
  properties: {},
  refs: {}
}

t.test('parseCommitBody', async t => {
  const ok = parseCommitBody(Buffer.from(`{"a":${BIG},"b":1.0,"c":[{"x":"y"}]}`))
  t.ok(ok.ok)
  if (ok.ok) t.equal(stringify(ok.value), `{"a":${BIG},"b":1.0,"c":[{"x":"y"}]}`, 'numbers keep their exact text')

  const dup = parseCommitBody(Buffer.from('{"updates":[],"updates":[]}'))
  t.notOk(dup.ok)
  if (!dup.ok) t.match(dup.message, /duplicate key "updates"/)

  const nestedDup = parseCommitBody(Buffer.from('{"a":{"k":1,"\\u006b":1}}'))
  t.notOk(nestedDup.ok, 'an escaped spelling of the same key is a duplicate too')

  const sameKeyOtherObjects = parseCommitBody(Buffer.from('{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]}'))
  t.ok(sameKeyOtherObjects.ok, 'the same key in sibling objects is fine')

  const proto = parseCommitBody(Buffer.from('{"updates":[{"__proto__":{"polluted":true}}]}'))
  t.notOk(proto.ok)
  if (!proto.ok) t.match(proto.message, /__proto__/)
  t.equal(({} as Record<string, unknown>).polluted, undefined)

  const ctor = parseCommitBody(Buffer.from('{"constructor":{"prototype":{"x":1}}}'))
  t.notOk(ctor.ok)

  const deep = parseCommitBody(Buffer.from('['.repeat(100_000) + ']'.repeat(100_000)))
  t.notOk(deep.ok, 'deep nesting is refused before the recursive parser sees it')
  if (!deep.ok) t.match(deep.message, /nesting deeper than/)

  const badUtf8 = parseCommitBody(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))
  t.notOk(badUtf8.ok)
  if (!badUtf8.ok) t.match(badUtf8.message, /UTF-8/)

  const notJson = parseCommitBody(Buffer.from('{"a":'))
  t.notOk(notJson.ok)
  if (!notJson.ok) t.match(notJson.message, /^Cannot read request body: invalid JSON/)

  const quotedBraces = parseCommitBody(Buffer.from('{"doc":"{{{[[[\\"}","k":1}'))
  t.ok(quotedBraces.ok, 'brackets and escaped quotes inside strings are not structure')
})

t.test('missingRequirements and spliced requirements', async t => {
  const evaluation = { flow: 'update' as const, schemaTouched: true, changes: [], proposed: { ...base, lastColumnId: 4 } }
  const body = `{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":${BIG}}],"updates":[{"action":"add-schema","schema":{"type":"struct","fields":[]}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG}}]}`
  const parsed = parseCommitBody(Buffer.from(body))
  t.ok(parsed.ok)
  if (!parsed.ok) return
  const tree = parsed.value as Record<string, unknown>
  const missing = missingRequirements(tree, base, evaluation)
  t.same(missing.map(m => [m.type, m.value]), [['assert-current-schema-id', 0], ['assert-last-assigned-field-id', 3]])
  const out = spliceRequirements(Buffer.from(body), [{ at: [], requirements: missing }]).toString()
  t.equal(out, body.replace(`${BIG}}],`, `${BIG}},{"type":"assert-current-schema-id","current-schema-id":0},{"type":"assert-last-assigned-field-id","last-assigned-field-id":3}],`),
    'appended to the client\'s requirements; every other byte as sent, the 64-bit id with every digit')
  t.equal(out.split(BIG).length - 1, 2)

  t.same(missingRequirements({ requirements: [{ type: 'ASSERT-CURRENT-SCHEMA-ID', 'current-schema-id': 0 }], updates: [{ action: 'set-current-schema', 'schema-id': 0 }] }, base,
    { ...evaluation, proposed: base }), [], 'present requirements (any case) are not added again')
  t.same(missingRequirements({}, undefined, { ...evaluation, flow: 'staged-create' }), [], 'never for a staged create')
  t.same(missingRequirements({}, base, { ...evaluation, schemaTouched: false }), [], 'never for a commit that keeps the schema')
  t.same(missingRequirements({ updates: [{ action: 'add-spec', spec: { fields: [] } }] }, base, evaluation), [],
    'a partition-spec change alone has requirements of its own')
  const replace = missingRequirements({ requirements: [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 }], updates: [{ action: 'remove-snapshot-ref', 'ref-name': 'main' }, { action: 'add-schema' }] }, base,
    { ...evaluation, flow: 'replace' })
  t.same(replace.map(m => [m.type, m.requiredOfClient]), [['assert-current-schema-id', false]],
    'a replace gets the current schema pinned, but a client is not required to send it')
  const noRows = missingRequirements({ requirements: [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 }], updates: [{ action: 'add-schema' }] }, { ...base, refs: {} },
    { ...evaluation, flow: 'replace' })
  t.same(noRows.map(m => [m.type, m.requiredOfClient]), [['assert-current-schema-id', false], ['assert-ref-snapshot-id', false]],
    'a replace of a table without main is pinned to main\'s absence too')
  t.equal(spliceRequirements(Buffer.from('{"requirements":[],"updates":[]}'), [{ at: [], requirements: noRows.slice(1) }]).toString(),
    '{"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[]}')
  t.equal(describeRequirement(noRows[1]!), '{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}')
})

t.test('answers', async t => {
  const f = { rule: 'TYPE_PROMOTION_VALID', severity: 'error' as const, message: 'Cannot change column type: price: decimal(10,2) -> decimal(8,2)', path: 'price', fieldId: 3, oldType: 'decimal(10,2)', newType: 'decimal(8,2)' }
  t.equal(findingLine(f), 'TYPE_PROMOTION_VALID (price, field id 3, decimal(10,2) -> decimal(8,2)): Cannot change column type: price: decimal(10,2) -> decimal(8,2)')
  const r = rejection([{ table: 'db.orders', errors: [f] }])
  t.equal(r.statusCode, 400)
  t.equal(r.body.error.code, 400)
  t.equal(r.body.error.type, 'IllegalArgumentException', 'the type Java raises as itself, not as "Malformed request"')
  t.match(r.body.error.message, /^Cannot commit schema change to db\.orders: 1 finding: TYPE_PROMOTION_VALID \(price, field id 3/)
  t.match(r.body.error.message, /\(see \/rules\/TYPE_PROMOTION_VALID\)$/, 'without a base: the page\'s path on iceguard')
  t.match(rejection([{ table: 'db.orders', errors: [f] }], { docs: 'https://iceguard.example.com' }).body.error.message,
    /\(see https:\/\/iceguard\.example\.com\/rules\/TYPE_PROMOTION_VALID\)$/, 'under the public URL or the request\'s origin')
  t.same(r.body.error.stack, [findingLine(f)])

  const h = warningsHeader([{ finding: { ...f, severity: 'warn', path: 'prix\u00e9\n' } }])
  t.ok(h !== undefined && /^[\x20-\x7e]+$/.test(h), 'header is one line of visible ASCII')
  t.match(h, /TYPE_PROMOTION_VALID \(prix%C3%A9%0A, field id 3/)
  const many = warningsHeader(Array.from({ length: 500 }, () => ({ finding: { ...f, severity: 'warn' as const } })), 300)
  t.ok(many !== undefined && many.length < 320 && /\+\d+ more$/.test(many), 'header is bounded')
  t.equal(warningsHeader([]), undefined)
})

t.test('principal never carries the credential', async t => {
  const payload = Buffer.from(JSON.stringify({ sub: 'alice@example.com', scope: 'x' })).toString('base64url')
  const jwt = `eyJhbGciOiJIUzI1NiJ9.${payload}.c2lnbmF0dXJl`
  t.equal(principalFromHeaders({ authorization: `Bearer ${jwt}` }), 'unverified-sub:alice@example.com', 'a subject iceguard did not verify is marked so')
  t.equal(principalFromHeaders({ authorization: 'Bearer opaque-secret-token' }), `token:${fingerprint('opaque-secret-token')}`)
  t.notMatch(principalFromHeaders({ authorization: 'Bearer opaque-secret-token' }) ?? '', /opaque/)
  t.equal(principalFromHeaders({ authorization: `Basic ${Buffer.from('bob:hunter2').toString('base64')}` }), 'unverified-user:bob')
  t.equal(principalFromHeaders({}), undefined)
})

t.test('audit sinks', async t => {
  const mem = memoryAuditSink()
  const record = { requestId: 'r1', kind: 'update-table', tables: ['db.t'], tableRefs: [{ namespace: ['db'], name: 't' }], flows: ['update'], verdict: 'allow' as const, rules: [], warnings: [], summary: 'added x', status: 200, forwarded: true, durationMs: 1 }
  mem.record(record)
  t.same(mem.records, [record])
  mem.clear()
  t.same(mem.records, [])
  const lines: Array<{ bindings: Record<string, unknown>, options?: { level: string }, obj: object, msg: string }> = []
  const sink = pinoAuditSink({ child: (bindings, options) => ({ info: (obj, msg) => { lines.push({ bindings, options, obj, msg }) } }) })
  sink.record(record)
  t.same(lines, [{ bindings: { component: 'audit' }, options: { level: 'info' }, obj: { audit: record }, msg: 'commit decided' }])

  // Through a real pino logger: quieted to warn it still writes the audit line; silent writes nothing.
  const { default: fastify } = await import('fastify')
  for (const [level, expected] of [['warn', 1], ['error', 1], ['silent', 0]] as const) {
    const written: string[] = []
    const app = fastify({ logger: { level, stream: { write: (line: string) => { written.push(line) } } } })
    const logger = app.log
    pinoAuditSink(logger).record(record)
    logger.info('an ordinary info line')
    t.equal(written.length, expected, `log level ${level}: ${expected} line(s)`)
    if (expected === 1) {
      const line = JSON.parse(written[0] as string) as { level: number, component: string, audit: unknown }
      t.equal(line.component, 'audit')
      t.equal(line.level, 30)
      t.same(line.audit, record)
    }
    await app.close()
  }
})

t.test('gateCommit with fake dependencies', async t => {
  const { gateCommit } = await import('../../../src/gate/commit-gate.js')
  const { readLoadAnswer } = await import('../../../src/gate/load-base.js')
  const { SPEC_ONLY_SETTINGS } = await import('../../../src/engine/rules/settings.js')
  const { UpstreamError, ERRORS } = await import('../../../src/errors.js')
  const metadata = {
    'format-version': 2,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: 'file:///tmp/t',
    'last-column-id': 2,
    'current-schema-id': 0,
    schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'n', required: false, type: 'int' }] }],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {},
    refs: {}
  }
  const loaded = Buffer.from(JSON.stringify({ 'metadata-location': 'x', metadata, config: { token: 'vended-secret' } }))
  const schemaCommit = (fields: unknown[], requirements: unknown[] = []) => Buffer.from(JSON.stringify({
    requirements,
    updates: [{ action: 'add-schema', schema: { type: 'struct', fields } }, { action: 'set-current-schema', 'schema-id': -1 }]
  }))
  const widened = [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'n', required: false, type: 'long' }]

  function harness (opts: { load?: () => Promise<{ statusCode: number, headers: Record<string, string>, body: Buffer }>, forward?: (b: Buffer) => Promise<{ statusCode: number, headers: Record<string, string>, body: Buffer }> } = {}) {
    const calls = { loads: 0, forwards: [] as Buffer[] }
    const audit = memoryAuditSink()
    const deps = {
      loadTable: async () => { calls.loads++; return readLoadAnswer(await (opts.load ?? (async () => ({ statusCode: 200, headers: {}, body: loaded })))()) },
      forward: async (b: Buffer) => { calls.forwards.push(b); return await (opts.forward ?? (async () => ({ statusCode: 200, headers: {}, body: Buffer.from('{}') })))(b) },
      settingsFor: () => SPEC_ONLY_SETTINGS,
      audit,
      config: { assertions: 'inject' as const, retryAfter: 3 }
    }
    const run = (body: Buffer, headers: Record<string, string> = {}, kind: 'update-table' | 'transaction' = 'update-table') =>
      gateCommit({ kind, ident: { namespace: ['db'], table: 't' }, rawBody: body, headers, requestId: 'req-1' }, deps)
    return { calls, audit, run }
  }

  await t.test('fast path: no load, no parse, the same Buffer forwarded', async t => {
    const h = harness()
    const raw = Buffer.from(`{"requirements":[],"updates":[{"action":"set-properties","updates":{"a":"b"}}],"x":${BIG}}`)
    const out = await h.run(raw)
    t.equal(out.type, 'upstream')
    t.equal(h.calls.loads, 0)
    t.equal(h.calls.forwards[0], raw, 'the very same bytes')
    t.equal(h.audit.records.length, 0, 'not a schema-changing write: no audit line')
  })

  await t.test('a legal change is forwarded with requirements injected and one audit line', async t => {
    const h = harness()
    const out = await h.run(schemaCommit(widened))
    t.equal(out.type, 'upstream')
    t.equal(h.calls.loads, 1)
    t.match(h.calls.forwards[0]!.toString(), '{"type":"assert-current-schema-id","current-schema-id":0}')
    t.equal(h.audit.records.length, 1)
    t.match(h.audit.records[0], { verdict: 'allow', tables: ['db.t'], flows: ['update'], injected: ['assert-current-schema-id'], status: 200, upstreamStatus: 200, forwarded: true, requestId: 'req-1' })
    t.notMatch(JSON.stringify(h.audit.records), /vended-secret/, 'loadTable credentials never reach the audit')
  })

  await t.test('a violation is a 400 and nothing is forwarded', async t => {
    const h = harness()
    const out = await h.run(schemaCommit([{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'n', required: false, type: 'string' }]))
    t.equal(out.type, 'answer')
    if (out.type === 'answer') {
      t.equal(out.answer.statusCode, 400)
      t.match(out.answer.body.error.message, /^Cannot commit schema change to db\.t: 1 finding: TYPE_PROMOTION_VALID \(n, field id 2, int -> string\)/)
    }
    t.equal(h.calls.forwards.length, 0)
    t.match(h.audit.records[0], { verdict: 'deny', rules: ['TYPE_PROMOTION_VALID'], forwarded: false, status: 400 })
  })

  await t.test('a stale requirement is a 409 in Iceberg\'s words, its stack naming it', async t => {
    const h = harness()
    const out = await h.run(schemaCommit(widened, [{ type: 'assert-current-schema-id', 'current-schema-id': 5 }]))
    t.equal(out.type === 'answer' && out.answer.statusCode, 409)
    if (out.type === 'answer') {
      t.equal(out.answer.body.error.message, 'Requirement failed: current schema changed: expected id 5 != 0')
      t.match(out.answer.body.error.stack, [/assert-current-schema-id: Requirement failed: current schema changed/])
    }
    t.equal(h.calls.forwards.length, 0)
  })

  await t.test('bad bodies are 400s, compressed ones 415', async t => {
    const h = harness()
    for (const body of ['{"updates":[{"action":"add-schema"}],"updates":[]}', '{"__proto__":{"x":1},"updates":[{"action":"add-schema"}]}', '[1]', '{"updates":[{"action":"add-schema"}]']) {
      const out = await h.run(Buffer.from(body))
      t.equal(out.type === 'answer' && out.answer.statusCode, 400, body)
    }
    const gz = await h.run(Buffer.from([0x1f, 0x8b, 0x08]), { 'content-encoding': 'gzip' })
    t.equal(gz.type === 'answer' && gz.answer.statusCode, 415)
    t.equal(h.calls.loads + h.calls.forwards.length, 0)
    t.ok(h.audit.records.every(r => r.verdict === 'refused'))
  })

  await t.test('upstream failures before and after forwarding', async t => {
    const down = harness({ load: async () => { throw new UpstreamError(ERRORS.UPSTREAM_UNAVAILABLE, 'unreachable', false, 'unreachable', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }) } })
    const a = await down.run(schemaCommit(widened))
    t.equal(a.type === 'answer' && a.answer.statusCode, 503)
    if (a.type === 'answer') {
      t.equal(a.answer.headers['retry-after'], '3')
      t.match(a.answer.body.error.message, 'ECONNREFUSED')
    }
    t.equal(down.calls.forwards.length, 0)

    const notSent = harness({ forward: async () => { throw new UpstreamError(ERRORS.UPSTREAM_UNAVAILABLE, 'x', false, 'unreachable') } })
    const b = await notSent.run(schemaCommit(widened))
    t.equal(b.type === 'answer' && b.answer.statusCode, 503, 'not sent: still a definite failure')

    const timedOut = harness({ forward: async () => { throw new UpstreamError(ERRORS.UPSTREAM_TIMEOUT_COMMIT, 'x', true, 'timeout') } })
    const c = await timedOut.run(schemaCommit(widened))
    t.equal(c.type === 'answer' && c.answer.statusCode, 504)
    if (c.type === 'answer') t.equal(c.answer.body.error.type, 'CommitStateUnknownException')
    t.equal(timedOut.calls.forwards.length, 1, 'sent once, never retried')

    const gone = harness({ load: async () => ({ statusCode: 404, headers: { 'content-type': 'application/json', etag: 'x' }, body: Buffer.from('{"error":{"message":"no","type":"NoSuchTableException","code":404}}') }) })
    const d = await gone.run(schemaCommit(widened))
    t.equal(d.type, 'upstream')
    if (d.type === 'upstream') {
      t.equal(d.forwarded, false)
      t.equal(d.response.statusCode, 404)
      t.same(d.response.headers, { 'content-type': 'application/json' }, 'the GET\'s ETag is not relayed')
    }

    const unreadable = harness({ load: async () => ({ statusCode: 200, headers: {}, body: Buffer.from('{"metadata":{"format-version":9}}') }) })
    const e = await unreadable.run(schemaCommit(widened))
    t.equal(e.type === 'answer' && e.answer.statusCode, 503, 'metadata the gate cannot read: fail closed, nothing forwarded')
    t.equal(unreadable.calls.forwards.length, 0)
  })

  await t.test('a judgement made on the cached base while it is revalidated counts only if the load returns that very base', async t => {
    const read = (m: unknown) => {
      const out = readLoadAnswer({ statusCode: 200, headers: {}, body: Buffer.from(JSON.stringify({ metadata: m })) }).metadata
      if (out === undefined) throw new Error('fixture does not read')
      return out
    }
    const cached = read(metadata)
    // The same table after a concurrent commit made `n` a string: int → long is now string → long.
    const moved = read({ ...metadata, schemas: [{ ...metadata.schemas[0], fields: [{ id: 1, name: 'id', required: true, type: 'long' }, { id: 2, name: 'n', required: false, type: 'string' }] }] })
    const run = async (peeked: TableMetadata | undefined, load: () => Promise<Awaited<ReturnType<Parameters<typeof gateCommit>[1]['loadTable']>>>) => {
      const order: string[] = []
      const forwards: Buffer[] = []
      let judgements = 0
      const out = await gateCommit({ kind: 'update-table', ident: { namespace: ['db'], table: 't' }, rawBody: schemaCommit(widened), headers: {}, requestId: 'r' }, {
        // The answer comes two turns of the event loop later: the gate yields one before judging early.
        loadTable: async () => { order.push('load sent'); await new Promise(resolve => setImmediate(() => setImmediate(resolve))); const r = await load(); order.push('load answered'); return r },
        peekBase: () => { order.push('peek'); return peeked },
        forward: async (b: Buffer) => { forwards.push(b); return { statusCode: 200, headers: {}, body: Buffer.from('{}') } },
        settingsFor: () => { judgements++; return SPEC_ONLY_SETTINGS },
        audit: memoryAuditSink(),
        config: { assertions: 'inject' as const, retryAfter: 3 }
      })
      return { out, order, forwards, judgements }
    }

    const confirmed = await run(cached, async () => ({ status: 200, metadata: cached }))
    t.same(confirmed.order, ['load sent', 'peek', 'load answered'], 'the revalidating GET leaves before the early judgement, made while it is in flight')
    t.equal(confirmed.out.type === 'upstream' && confirmed.out.forwarded, true)
    t.equal(confirmed.judgements, 1, 'confirmed (the 304 case): judged once, the early verdict kept')

    const stale = await run(cached, async () => ({ status: 200, metadata: moved }))
    t.equal(stale.judgements, 2, 'new metadata: judged again')
    t.equal(stale.out.type === 'answer' && stale.out.answer.statusCode, 400, 'the verdict is the new base\'s (string → long refused), not the cached one\'s')
    t.equal(stale.forwards.length, 0)

    const looser = await run(moved, async () => ({ status: 200, metadata: cached }))
    t.equal(looser.out.type === 'upstream' && looser.out.forwarded, true, 'an early refusal on a stale base is dropped as well')

    const down = await run(cached, async () => { throw new UpstreamError(ERRORS.UPSTREAM_UNAVAILABLE, 'unreachable', false, 'unreachable') })
    t.equal(down.out.type === 'answer' && down.out.answer.statusCode, 503, 'no confirmation: nothing forwarded on the early verdict')
    t.equal(down.forwards.length, 0)

    const nothingCached = await run(undefined, async () => ({ status: 200, metadata: cached }))
    t.equal(nothingCached.judgements, 1, 'nothing cached: judged once, after the load')
    t.equal(nothingCached.out.type === 'upstream' && nothingCached.out.forwarded, true)
  })

  await t.test('an override header without a configured secret is refused', async t => {
    const h = harness()
    const out = await h.run(schemaCommit(widened), { 'x-iceguard-override': 'igo1.a.b' })
    t.equal(out.type === 'answer' && out.answer.statusCode, 400)
    if (out.type === 'answer') t.match(out.answer.body.error.message, 'overrides are not enabled')
    t.equal(h.calls.loads + h.calls.forwards.length, 0)
  })
})

t.test('spliceRequirements: text spliced into the bytes as received', async t => {
  const csid: MissingRequirement = { type: 'assert-current-schema-id', field: 'current-schema-id', value: 7, requiredOfClient: true }
  const lcid: MissingRequirement = { type: 'assert-last-assigned-field-id', field: 'last-assigned-field-id', value: 12, requiredOfClient: true }
  const both = [csid, lcid]
  const added = '{"type":"assert-current-schema-id","current-schema-id":7},{"type":"assert-last-assigned-field-id","last-assigned-field-id":12}'
  const splice = (body: string, requirements = both, at: Array<string | number> = []): string => {
    t.ok(parseCommitBody(Buffer.from(body)).ok, 'the input is a body the gate accepts')
    const out = spliceRequirements(Buffer.from(body), [{ at, requirements }]).toString()
    const read = parseCommitBody(Buffer.from(out))
    t.ok(read.ok, 'the output is valid JSON with no duplicate key')
    return out
  }

  const snap = `{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG}}`
  t.equal(splice(`{"updates":[${snap}]}`), `{"requirements":[${added}],"updates":[${snap}]}`,
    'no requirements key: one is added at the start of the object')
  t.equal(splice(`{"requirements":[],"updates":[${snap}]}`), `{"requirements":[${added}],"updates":[${snap}]}`, 'empty array')
  t.equal(splice('{"requirements":[ \n ],"updates":[]}'), `{"requirements":[${added} \n ],"updates":[]}`, 'empty array with whitespace inside')
  t.equal(splice('{}'), `{"requirements":[${added}]}`, 'empty object: no stray comma')
  t.equal(splice('{ }'), `{"requirements":[${added}] }`)

  const pretty = `{\n  "identifier" : { "namespace" : [ "db" ], "name" : "t" },\n  "requirements" : [\n    { "type" : "assert-table-uuid", "uuid" : "u" }\n  ],\n  "updates" : [ ${snap} ]\n}\n`
  t.equal(splice(pretty), pretty.replace('"u" }', `"u" },${added}`), 'pretty-printed: after the last element, whitespace kept')
  t.equal(splice('\t{\r\n"requirements"\t:\r\n[ {"type":"assert-table-uuid","uuid":"u"}\t]\r\n,"updates":[]}'),
    `\t{\r\n"requirements"\t:\r\n[ {"type":"assert-table-uuid","uuid":"u"},${added}\t]\r\n,"updates":[]}`, 'tabs and CRLF')

  const tricky = '{"doc":"say \\"requirements\\":[ here","updates":[{"action":"set-properties","updates":{"requirements":"[x]","k\\\\":"}"}}],"requirements":[{"type":"assert-table-uuid","uuid":"\\"]"}]}'
  t.equal(splice(tricky), tricky.replace('"\\"]"}]}', `"\\"]"},${added}]}`),
    'escaped quotes, "requirements" inside strings and nested objects are not the key')
  const escapedKey = '{"requir\\u0065ments":[{"type":"assert-table-uuid","uuid":"u"}],"updates":[]}'
  t.equal(splice(escapedKey), escapedKey.replace('"u"}]', `"u"},${added}]`), 'a key spelled with an escape is the same key')
  t.equal(splice(`{"requirements":null,"updates":[${snap}]}`), `{"requirements":[${added}],"updates":[${snap}]}`, 'a non-array value is replaced')
  t.equal(splice('{"requirements":[],"updates":[]}', [csid]), '{"requirements":[{"type":"assert-current-schema-id","current-schema-id":7}],"updates":[]}', 'one requirement')

  const utf8 = '{"updates":[{"action":"set-properties","updates":{"naïve ✓":"日本"}}],"requirements":[]}'
  t.same(spliceRequirements(Buffer.from(utf8), [{ at: [], requirements: [csid] }]),
    Buffer.concat([Buffer.from(utf8.slice(0, -2)), Buffer.from('{"type":"assert-current-schema-id","current-schema-id":7}]}')]), 'byte offsets across multi-byte characters')

  const tx = `{"table-changes":[{"identifier":{"namespace":["a"],"name":"x"},"requirements":[],"updates":[${snap}]},{"identifier":{"namespace":["a"],"name":"y"},"updates":[]}]}`
  const both2 = spliceRequirements(Buffer.from(tx), [
    { at: ['table-changes', 1], requirements: [lcid] },
    { at: ['table-changes', 0], requirements: [csid] }
  ]).toString()
  t.equal(both2, tx
    .replace('"requirements":[]', '"requirements":[{"type":"assert-current-schema-id","current-schema-id":7}]')
    .replace('},{"identifier"', '},{"requirements":[{"type":"assert-last-assigned-field-id","last-assigned-field-id":12}],"identifier"'),
  'a transaction: each table change gets its own, in one pass')
  t.ok(both2.includes(`"snapshot-id":${BIG}`), 'the 64-bit id 3055729675574597004 is kept')

  const same = Buffer.from('{"updates":[]}')
  t.equal(spliceRequirements(same, [{ at: [], requirements: [] }]), same, 'nothing to add: the same buffer')
  t.throws(() => spliceRequirements(Buffer.from('[1]'), [{ at: [], requirements: [csid] }]), /not a JSON object/)
  t.throws(() => spliceRequirements(Buffer.from('{"table-changes":[]}'), [{ at: ['table-changes', 0], requirements: [csid] }]), /no element 0/)
})

t.test('parseCommitBody: fast reader keeps numbers exact and grammar strict', async t => {
  const read = parseCommitBody(Buffer.from(`{"a":${BIG},"b":-${BIG},"c":1.0,"d":1e400,"e":12,"f":-0.5E-3,"g":[${BIG}]}`))
  t.ok(read.ok)
  if (read.ok) {
    const v = read.value as Record<string, unknown>
    t.equal(v.e, 12, 'a short integer is a plain number')
    t.equal(String(v.a), BIG)
    t.equal(String(v.b), `-${BIG}`)
    t.equal(String(v.c), '1.0', 'a fraction keeps its text: 1.0 is not an integer')
    t.equal(String(v.d), '1e400', 'an exponent keeps its text: not Infinity')
    t.equal(String(v.f), '-0.5E-3')
    t.equal(stringify(v), `{"a":${BIG},"b":-${BIG},"c":1.0,"d":1e400,"e":12,"f":-0.5E-3,"g":[${BIG}]}`)
  }
  for (const bad of ['{"a":1.}', '{"a":0000000000000000001}', '{"a":1-2}', '{"a":--1}', '{"a":1e}', '{"a":.5}']) {
    const r = parseCommitBody(Buffer.from(bad))
    t.notOk(r.ok, `${bad} is refused`)
    if (!r.ok) t.match(r.message, /^Cannot read request body: invalid JSON: /)
  }
  const marker = parseCommitBody(Buffer.from(`{"s":"\\u0001${BIG}","a":${BIG},"b":1.5}`))
  t.ok(marker.ok, 'a string holding the marker character takes the slow path')
  if (marker.ok) t.equal(stringify(marker.value), `{"s":"\\u0001${BIG}","a":${BIG},"b":1.5}`)
  const markerDup = parseCommitBody(Buffer.from(`{"s":"\\u0001","a":${BIG},"a":1}`))
  t.notOk(markerDup.ok, 'duplicate keys are refused on the slow path too')
  t.notOk(parseCommitBody(Buffer.from('{"a":{"constructor":{"prototype":1}}}')).ok, 'constructor.prototype at any depth')
  t.ok(parseCommitBody(Buffer.from('{"constructor":1,"b":{"prototype":1}}')).ok, 'prototype under another key is data')
  t.ok(parseCommitBody(Buffer.from('{"constructor":{"a":{"prototype":1}}}')).ok)
  const arrays = parseCommitBody(Buffer.from('{"a":[{"k":1},{"k":2}],"b":[[{"k":1,"j":2}]]}'))
  t.ok(arrays.ok, 'keys are tracked per object, also inside arrays')
  t.notOk(parseCommitBody(Buffer.from('{"a":[{"k":1,"k":2}]}')).ok)
})

t.test('rule links: under the public URL, else the request\'s own origin; a Host that is not a plain host is not linked to', async (t) => {
  t.equal(ruleLinkBase('https://iceguard.example.com/', { host: 'internal:8181' }), 'https://iceguard.example.com')
  t.equal(ruleLinkBase(undefined, { host: '127.0.0.1:8181' }), 'http://127.0.0.1:8181')
  t.equal(ruleLinkBase(undefined, { host: 'iceguard.example.com', 'x-forwarded-proto': 'https, http' }), 'https://iceguard.example.com')
  t.equal(ruleLinkBase(undefined, { host: '[::1]:8181' }), 'http://[::1]:8181')
  for (const host of ['evil.example/path', 'a b', 'x@evil.example', '']) t.equal(ruleLinkBase(undefined, { host }), '', `Host ${JSON.stringify(host)}: a path-only link`)
  t.equal(ruleLinkBase(undefined, {}), '')
})
