/**
 * Tables with long schema histories, over real HTTP on both transports:
 *
 * - the history rules judge from the table's history summary whatever the summary budget
 *   (`--gate-history-memory`): a table whose summary alone is over it, and no summary kept at all,
 *   refuse a field id reused from an old schema and forward a fresh one, commit after commit;
 * - metadata larger than `--upstream-max-response` gets a final 400 that names the setting (not a
 *   503 "retry later"), and nothing reaches the upstream but the base load.
 */
import t from 'tap'
import { startProxy, startRecordingUpstream, type RecordedRequest } from '../helpers/index.js'
import { exchange, TRANSPORTS } from '../helpers/raw-http.js'
import { loadConfig } from '../../src/main/config.js'
import type { ServerResponse } from 'node:http'

const TABLE = '/v1/namespaces/db/tables/t'
const UUID = '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'

/**
 * A table of `width` columns and `versions` schemas: schema k drops column k+1 and adds a column
 * with a new id under the dropped one's name, so every name is reused and every early id dropped.
 */
function metadata (width: number, versions: number): { meta: Record<string, unknown>, lastColumnId: number } {
  const schemas: unknown[] = []
  let columns = Array.from({ length: width }, (_, i) => ({ id: i + 1, name: `c${i + 1}`, required: false, type: 'long' }))
  let next = width + 1
  for (let k = 0; k < versions; k++) {
    schemas.push({ type: 'struct', 'schema-id': k, fields: columns })
    const dropped = columns[k % columns.length]!
    columns = [...columns.filter(c => c !== dropped), { id: next++, name: dropped.name, required: false, type: 'string' }]
  }
  const last = schemas[schemas.length - 1] as { fields: unknown[] }
  return {
    lastColumnId: next - 2,
    meta: {
      'format-version': 2,
      'table-uuid': UUID,
      location: 's3://warehouse/db/t',
      'last-sequence-number': 0,
      'last-updated-ms': 1700000000000,
      'last-column-id': next - 2,
      'current-schema-id': versions - 1,
      schemas,
      'default-spec-id': 0,
      'partition-specs': [{ 'spec-id': 0, fields: [] }],
      'last-partition-id': 999,
      'default-sort-order-id': 0,
      'sort-orders': [{ 'order-id': 0, fields: [] }],
      properties: {},
      snapshots: [],
      refs: {},
      'snapshot-log': [],
      'metadata-log': [],
      _current: last.fields
    }
  }
}

function commitAdding (meta: Record<string, unknown>, field: Record<string, unknown>): string {
  const { _current: current, ...rest } = meta
  return JSON.stringify({
    requirements: [
      { type: 'assert-table-uuid', uuid: rest['table-uuid'] },
      { type: 'assert-current-schema-id', 'current-schema-id': rest['current-schema-id'] }
    ],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': (rest['current-schema-id'] as number) + 1, fields: [...(current as unknown[]), field] } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  })
}

function serve (meta: Record<string, unknown>) {
  const { _current: _, ...wire } = meta
  const text = JSON.stringify({ 'metadata-location': 's3://w/db/t/metadata/00001.json', metadata: wire })
  return (req: RecordedRequest, res: ServerResponse): void => {
    const body = req.method === 'GET' && req.url.startsWith('/v1/config') ? '{"defaults":{},"overrides":{}}' : req.method === 'GET' ? text : '{}'
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  }
}

const posts = (requests: readonly RecordedRequest[]): RecordedRequest[] => requests.filter(r => r.method === 'POST')

for (const memory of ['1KiB', '0']) {
  t.test(`a long history is judged with --gate-history-memory ${memory}`, async t => {
    const { meta, lastColumnId } = metadata(40, 60)
    const upstream = await startRecordingUpstream(t, serve(meta))
    const proxy = await startProxy(t, { upstream: upstream.url, 'gate-history-memory': memory })
    const port = Number(new URL(proxy.url).port)
    // Id 3 belonged to c3, dropped in schema 3; id 45 to a column added in schema 4, dropped later.
    for (const { transport, name } of TRANSPORTS) {
      for (const reused of [3, 45]) {
        const before = posts(upstream.requests).length
        const answer = await exchange(port, transport, { method: 'POST', target: TABLE, body: commitAdding(meta, { id: reused, name: 'fresh_name', required: false, type: 'long' }) })
        t.equal(answer.status, 400, `${name}: reusing id ${reused} is refused`)
        t.match(answer.body, /FIELD_ID_NOT_REUSED/, `${name}: by FIELD_ID_NOT_REUSED`)
        t.equal(posts(upstream.requests).length, before, `${name}: nothing was forwarded`)
      }
      const before = posts(upstream.requests).length
      const body = commitAdding(meta, { id: lastColumnId + 1, name: 'fresh_name', required: false, type: 'long' })
      const answer = await exchange(port, transport, { method: 'POST', target: TABLE, body })
      t.equal(answer.status, 200, `${name}: a fresh id is forwarded`)
      const sent = posts(upstream.requests)
      t.equal(sent.length, before + 1)
      // The gate may add requirements (assertion injection); the updates arrive as sent.
      const arrived = JSON.parse(sent[sent.length - 1]!.body.toString()) as { updates: unknown, requirements: unknown[] }
      t.same(arrived.updates, (JSON.parse(body) as { updates: unknown }).updates, `${name}: the updates as sent`)
    }
    // Every base above was the same metadata: read whole once (or on every commit with no budget).
    const metrics = await (await fetch(`${proxy.url}/metrics`)).text()
    const count = (outcome: string): number => Number(new RegExp(`^iceguard_gate_history_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0)
    if (memory === '0') t.ok(count('built') >= 6, 'no budget: every judged commit read the history whole')
    else t.ok(count('over-budget') >= 1 && count('reused') >= 1, 'over the budget, the table stayed and its summary was reused')
  })
}

t.test('metadata larger than --upstream-max-response: a final 400 naming the setting, nothing forwarded', async t => {
  const { meta, lastColumnId } = metadata(40, 60)
  const upstream = await startRecordingUpstream(t, serve(meta))
  const proxy = await startProxy(t, { upstream: upstream.url, 'upstream-max-response': '16KiB' })
  const port = Number(new URL(proxy.url).port)
  for (const { transport, name } of TRANSPORTS) {
    const answer = await exchange(port, transport, { method: 'POST', target: TABLE, body: commitAdding(meta, { id: lastColumnId + 1, name: 'x', required: false, type: 'long' }) })
    t.equal(answer.status, 400, `${name}: not a 503 a client would retry forever: ${answer.status} ${answer.body}`)
    t.notOk('retry-after' in answer.headers, `${name}: no Retry-After`)
    const error = (JSON.parse(answer.body) as { error: { type: string, code: number, message: string } }).error
    t.equal(error.type, 'BadRequestException')
    t.equal(error.code, 400)
    t.match(error.message, /^Cannot judge a commit to table db\.t: .*--upstream-max-response \(ICEGUARD_UPSTREAM_MAX_RESPONSE\)/, `${name}: the message names the setting`)
    t.equal(posts(upstream.requests).length, 0, `${name}: nothing was forwarded`)
  }
})

t.test('--gate-history-memory: a size, 0 for none, 64MiB by default; a bad value names the setting', async t => {
  t.equal(loadConfig([], {}).gateHistoryMemory, 64 * 1024 * 1024)
  t.equal(loadConfig(['--gate-history-memory', '8MiB'], {}).gateHistoryMemory, 8 * 1024 * 1024)
  t.equal(loadConfig([], { ICEGUARD_GATE_HISTORY_MEMORY: '0' }).gateHistoryMemory, 0)
  const err = t.throws(() => loadConfig(['--gate-history-memory', 'lots'], {})) as Error
  t.match(err.message, /--gate-history-memory\/ICEGUARD_GATE_HISTORY_MEMORY: "lots"/)
})
