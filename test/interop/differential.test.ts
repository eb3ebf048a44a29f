/**
 * The embedded development catalog answers as the reference catalog does. The same request
 * sequences go straight to a fresh embedded catalog and to the Iceberg REST fixture (Iceberg's
 * reference REST catalog, which applies commits with Iceberg Java's own TableMetadata builder):
 * every recorded client flow (test/fixtures/clients), then error cases — a missing namespace or
 * table, a stale requirement, a duplicate create, updates that cannot apply. Per request the two
 * must agree on the status and the error type, and an answer that carries table metadata must
 * describe the same table once what is unique to a catalog (uuids, timestamps, locations) is set
 * aside. No iceguard in between: this is about what a newcomer meets first, `npm start`'s catalog.
 */
import { stringify, parse } from 'lossless-json'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { gunzipSync } from 'node:zlib'
import { startCatalog } from '../helpers/catalog.js'
import { canon, clientHeaders, fill, flowFiles, loadFlow, MISSING, pointer, type Step } from '../helpers/client-flows.js'
import { startFixture, type RunningFixture } from './helpers/fixture.js'
import { needToolchain, toolchainSkip } from './helpers/toolchain.js'

const skip = toolchainSkip(['java', 'fixture'])

interface Answer { readonly status: number, readonly headers: Record<string, string | string[] | undefined>, readonly text: string, readonly json: unknown }

/** One catalog's side of a replay: its own captured values ({{uuid}}, {{etag}}) and its answers. */
class Side {
  readonly vars: Record<string, unknown> = { now: Date.now() }
  constructor (readonly name: string, readonly base: string) {}

  async send (method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
    const res = await request(`${this.base}${path}`, { method: method as 'GET', headers, ...(body === undefined ? {} : { body }) })
    let raw = Buffer.from(await res.body.arrayBuffer())
    // The fixture compresses for clients that accept it (the Java client's headers say gzip).
    if (res.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw)
    const text = raw.toString('utf8')
    let json: unknown
    if (text !== '') {
      try { json = canon(parse(text)) } catch {}
    }
    return { status: res.statusCode, headers: res.headers, text, json }
  }

  async step (step: Step, client: Record<string, string>): Promise<Answer> {
    const body = step.body === undefined ? undefined : fill(step.body, this.vars)
    const sent = step.bodyText !== undefined ? fill(step.bodyText, this.vars) as string : body === undefined ? undefined : stringify(body) as string
    const headers: Record<string, string> = { ...client, ...(fill(step.headers ?? {}, this.vars) as Record<string, string>) }
    delete headers['Content-Length']
    for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k]
    const answer = await this.send(step.method, step.path, headers, sent)
    for (const [name, from] of Object.entries(step.capture ?? {})) {
      const v = from.startsWith('header:') ? answer.headers[from.slice(7)] : pointer(answer.json, from)
      // A header the catalog does not send (the fixture of Iceberg 1.10 sends no ETag) is sent back
      // by no client either: an empty capture drops the header that would carry it.
      this.vars[name] = v === undefined || v === MISSING ? '' : v
    }
    return answer
  }
}

/**
 * Table metadata without what is unique to the catalog that wrote it: the table's uuid, where its
 * files are, when each change happened, and the log of metadata files (TableMetadata: the spec's
 * `location`, `table-uuid`, `last-updated-ms`, `metadata-log`, `snapshot-log`, per snapshot
 * `timestamp-ms` and `manifest-list`).
 */
function comparable (metadata: unknown): unknown {
  if (metadata === null || typeof metadata !== 'object') return metadata
  const m = { ...(metadata as Record<string, unknown>) }
  for (const k of ['table-uuid', 'view-uuid', 'location', 'last-updated-ms', 'metadata-log', 'snapshot-log']) delete m[k]
  if (Array.isArray(m.snapshots)) {
    m.snapshots = (m.snapshots as Array<Record<string, unknown>>).map(({ 'timestamp-ms': _ts, 'manifest-list': _ml, ...rest }) => rest)
  }
  if (Array.isArray(m.versions)) {
    m.versions = (m.versions as Array<Record<string, unknown>>).map(({ 'timestamp-ms': _ts, ...rest }) => rest)
  }
  if (Array.isArray(m['version-log'])) m['version-log'] = (m['version-log'] as unknown[]).length
  // A staged table's creation time (CatalogHandlers.stageTableCreate): present alike, its value a clock's.
  const properties = m.properties as Record<string, unknown> | undefined
  if (properties?.['created-at'] !== undefined) m.properties = { ...properties, 'created-at': typeof properties['created-at'] }
  return m
}

function errorType (a: Answer): unknown {
  return (a.json as { error?: { type?: unknown } } | undefined)?.error?.type
}

/**
 * Where the two differ on purpose, each with its reason; the test asserts both sides as written
 * here, so a change on either side shows. Keyed by step name (flows) or error case.
 */
const KNOWN: Readonly<Record<string, { readonly embedded: number, readonly fixture: number, readonly why: string }>> = {
  'a later load from the table cache: If-None-Match, answered 304': {
    embedded: 304,
    fixture: 200,
    why: 'ETag and If-None-Match on loadTable came with the REST spec of Iceberg 1.11; the 1.10 fixture sends no ETag, so it answers every load in full'
  },
  'DROP TABLE: RESTSessionCatalog.dropTable': {
    embedded: 204,
    fixture: 200,
    why: 'the REST spec answers dropTable with 204 No Content; the fixture\'s servlet writes 200 with an empty body (Java\'s client accepts both)'
  },
  'set a default spec that does not exist': {
    embedded: 400,
    fixture: 500,
    why: 'the fixture checks compatibility before the spec exists and fails with a NullPointerException; Java\'s builder means to refuse it (IllegalArgumentException)'
  },
  'set a default sort order that does not exist': {
    embedded: 400,
    fixture: 500,
    why: 'as for the default spec: a NullPointerException in the fixture where the builder refuses the argument'
  },
  'an update action nobody knows': {
    embedded: 400,
    fixture: 500,
    why: 'the fixture\'s servlet turns the parser\'s UnsupportedOperationException into an HTML 500; a request that cannot be read is a 400 in the REST spec'
  },
  'a requirement type nobody knows': {
    embedded: 400,
    fixture: 500,
    why: 'as for an unknown update action'
  },
  'a commit body that is not JSON': {
    embedded: 400,
    fixture: 500,
    why: 'the fixture answers a Jackson parse error with an HTML 500; the REST spec\'s answer to a malformed request is 400'
  }
}

/** The two answers agree: status, error type, and the metadata they describe. */
function agree (t: Test, what: string, embedded: Answer, fixture: Answer): void {
  const known = KNOWN[what]
  if (known !== undefined) {
    t.equal(embedded.status, known.embedded, `${what}: the embedded catalog answers ${known.embedded} (${known.why})`)
    t.equal(fixture.status, known.fixture, `${what}: the fixture answers ${known.fixture}`)
    return
  }
  t.equal(embedded.status, fixture.status, `${what}: status (embedded ${embedded.status} ${embedded.text.slice(0, 300)} / fixture ${fixture.status} ${fixture.text.slice(0, 300)})`)
  if (fixture.status >= 400 && fixture.json !== undefined) {
    t.equal(errorType(embedded), errorType(fixture), `${what}: error type`)
    t.equal((embedded.json as { error?: { code?: unknown } } | undefined)?.error?.code, embedded.status, `${what}: error.code is the status`)
  }
  const fm = pointer(fixture.json, '/metadata')
  if (fixture.status === 200 && fm !== MISSING) {
    t.strictSame(comparable(pointer(embedded.json, '/metadata')), comparable(fm), `${what}: the same metadata`)
    // A staged table has no metadata file yet: the spec allows null or absent, and Java reads both as null.
    const location = (a: Answer): string => typeof pointer(a.json, '/metadata-location') === 'string' ? 'a location' : 'none'
    t.equal(location(embedded), location(fixture), `${what}: metadata-location present alike`)
  }
}

/** Drops what a flow created in the fixture, which is shared by the flows (a JVM per flow is too slow). */
async function wipe (fixture: RunningFixture): Promise<void> {
  const side = new Side('fixture', fixture.url)
  const list = async (path: string, key: string): Promise<unknown[]> => {
    const a = await side.send('GET', path, {}, undefined)
    return a.status === 200 ? pointer(a.json, `/${key}`) as unknown[] : []
  }
  const walk = async (parent: string[]): Promise<void> => {
    const query = parent.length === 0 ? '' : `?parent=${encodeURIComponent(parent.join('\u001f'))}`
    for (const ns of await list(`/v1/namespaces${query}`, 'namespaces') as string[][]) {
      await walk(ns)
      const path = `/v1/namespaces/${encodeURIComponent(ns.join('\u001f'))}`
      for (const id of await list(`${path}/tables`, 'identifiers') as Array<{ name: string }>) await side.send('DELETE', `${path}/tables/${encodeURIComponent(id.name)}?purgeRequested=true`, {}, undefined)
      for (const id of await list(`${path}/views`, 'identifiers') as Array<{ name: string }>) await side.send('DELETE', `${path}/views/${encodeURIComponent(id.name)}`, {}, undefined)
      await side.send('DELETE', path, {}, undefined)
    }
  }
  await walk([])
}

const json = { 'content-type': 'application/json' }
const schema = (id: number, fields: Array<[number, string, string, boolean?]>): unknown => ({
  type: 'struct', 'schema-id': id, fields: fields.map(([fid, name, type, required]) => ({ id: fid, name, required: required ?? false, type }))
})

/** Requests that must fail, and fail alike; each after the table db.t (id long, v int) exists. */
const ERRORS: ReadonlyArray<{ readonly name: string, readonly method: string, readonly path: string, readonly body?: unknown }> = [
  { name: 'load a table that does not exist', method: 'GET', path: '/v1/namespaces/db/tables/nope' },
  { name: 'load a table in a namespace that does not exist', method: 'GET', path: '/v1/namespaces/nope/tables/t' },
  { name: 'load a namespace that does not exist', method: 'GET', path: '/v1/namespaces/nope' },
  { name: 'list the tables of a namespace that does not exist', method: 'GET', path: '/v1/namespaces/nope/tables' },
  { name: 'create a namespace that exists', method: 'POST', path: '/v1/namespaces', body: { namespace: ['db'] } },
  { name: 'create a table that exists', method: 'POST', path: '/v1/namespaces/db/tables', body: { name: 't', schema: schema(0, [[1, 'id', 'long']]) } },
  { name: 'create a table in a namespace that does not exist', method: 'POST', path: '/v1/namespaces/nope/tables', body: { name: 't', schema: schema(0, [[1, 'id', 'long']]) } },
  { name: 'commit to a table that does not exist', method: 'POST', path: '/v1/namespaces/db/tables/nope', body: { requirements: [], updates: [{ action: 'set-properties', updates: { a: 'b' } }] } },
  { name: 'commit on a stale schema id', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 7 }], updates: [{ action: 'set-properties', updates: { a: 'b' } }] } },
  { name: 'commit on another table uuid', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [{ type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' }], updates: [] } },
  { name: 'commit on a stale last assigned field id', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 1 }], updates: [] } },
  { name: 'assert-create on a table that exists', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [{ type: 'assert-create' }], updates: [] } },
  { name: 'assert a branch that does not exist at a snapshot', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }], updates: [] } },
  { name: 'set a current schema that does not exist', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'set-current-schema', 'schema-id': 42 }] } },
  { name: 'set-current-schema -1 without an added schema', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'set-current-schema', 'schema-id': -1 }] } },
  { name: 'set a default spec that does not exist', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'set-default-spec', 'spec-id': 9 }] } },
  { name: 'set a default sort order that does not exist', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'set-default-sort-order', 'sort-order-id': 9 }] } },
  { name: 'downgrade the format version', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'upgrade-format-version', 'format-version': 1 }] } },
  { name: 'remove a snapshot ref that does not exist', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'remove-snapshot-ref', 'ref-name': 'nope' }] } },
  { name: 'an update action nobody knows', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [], updates: [{ action: 'make-it-so' }] } },
  { name: 'a requirement type nobody knows', method: 'POST', path: '/v1/namespaces/db/tables/t', body: { requirements: [{ type: 'assert-mood' }], updates: [] } },
  { name: 'a commit body that is not JSON', method: 'POST', path: '/v1/namespaces/db/tables/t', body: '{"requirements": [' },
  { name: 'drop a table that does not exist', method: 'DELETE', path: '/v1/namespaces/db/tables/nope' },
  { name: 'drop a namespace that is not empty', method: 'DELETE', path: '/v1/namespaces/db' },
  { name: 'drop a namespace that does not exist', method: 'DELETE', path: '/v1/namespaces/nope' },
  { name: 'rename a table onto one that exists', method: 'POST', path: '/v1/tables/rename', body: { source: { namespace: ['db'], name: 't' }, destination: { namespace: ['db'], name: 'u' } } },
  { name: 'rename a table that does not exist', method: 'POST', path: '/v1/tables/rename', body: { source: { namespace: ['db'], name: 'nope' }, destination: { namespace: ['db'], name: 'nope2' } } },
  { name: 'rename a table into a namespace that does not exist', method: 'POST', path: '/v1/tables/rename', body: { source: { namespace: ['db'], name: 't' }, destination: { namespace: ['nope'], name: 't' } } },
  { name: 'load a view that does not exist', method: 'GET', path: '/v1/namespaces/db/views/nope' }
]

t.test('the embedded catalog against the Iceberg REST fixture', { skip }, async t => {
  if (!needToolchain(t, ['java', 'fixture'])) return
  // Strict mode: a table is created only in a namespace that exists, as every catalog iceguard
  // fronts does (JdbcCatalog's `jdbc.strict-mode`; off, it creates the namespace implicitly).
  const fixture = await startFixture({ env: { CATALOG_JDBC_STRICT__MODE: 'true' } })
  t.teardown(() => fixture.stop())

  for (const client of ['java', 'pyiceberg', 'rust']) {
    const headers = clientHeaders(client)
    for (const file of flowFiles(client)) {
      t.test(`${client}/${file}`, async t => {
        const embedded = await startCatalog(t)
        const a = new Side('embedded', embedded.url)
        const b = new Side('fixture', fixture.url)
        try {
          for (const step of loadFlow(client, file).steps) {
            agree(t, step.name, await a.step(step, headers), await b.step(step, headers))
          }
        } finally {
          await wipe(fixture)
        }
      })
    }
  }

  t.test('errors', async t => {
    const embedded = await startCatalog(t)
    const sides = [new Side('embedded', embedded.url), new Side('fixture', fixture.url)] as const
    const both = async (method: string, path: string, body?: unknown): Promise<[Answer, Answer]> => {
      const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
      return [await sides[0].send(method, path, json, text), await sides[1].send(method, path, json, text)]
    }
    try {
      agree(t, 'create namespace db', ...await both('POST', '/v1/namespaces', { namespace: ['db'] }))
      agree(t, 'create table db.t', ...await both('POST', '/v1/namespaces/db/tables', { name: 't', schema: schema(0, [[1, 'id', 'long', true], [2, 'v', 'int']]) }))
      agree(t, 'create table db.u', ...await both('POST', '/v1/namespaces/db/tables', { name: 'u', schema: schema(0, [[1, 'id', 'long', true]]) }))
      for (const e of ERRORS) agree(t, e.name, ...await both(e.method, e.path, e.body))
    } finally {
      await wipe(fixture)
    }
  })
})
