/**
 * Fixtures for the gate's end-to-end tests: a table with every kind of column the spec rules look
 * at, commit bodies shaped as each client sends them, and an interposer that
 * sits between iceguard and the catalog to stage races and upstream answers.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { request } from 'undici'
import type { IcebergRestCatalog } from 'iceberg-js'
import type { RunningCatalog } from './catalog.js'
import { isOpener } from './transports.js'

/** A 64-bit snapshot id that `JSON.parse` rounds (Iceberg Java fixture TableMetadataV2Valid.json). */
export const BIG_ID = '3055729675574597004'

export interface FieldJson {
  id: number
  name: string
  required: boolean
  type: unknown
  doc?: string
  'initial-default'?: unknown
  'write-default'?: unknown
}

export interface SchemaJson {
  type: 'struct'
  'schema-id': number
  'identifier-field-ids'?: number[]
  fields: FieldJson[]
}

export interface Meta {
  'format-version': number
  'table-uuid': string
  location: string
  'last-column-id': number
  'current-schema-id': number
  schemas: SchemaJson[]
  [key: string]: unknown
}

/**
 * `db.<name>`: identifier `id`; `name` sources the sort order, `day` the partition spec; a
 * struct, a list and a map with an int key. v3 tables add `level` with an initial-default.
 */
export async function createFixtureTable (ice: IcebergRestCatalog, name: string, formatVersion: 2 | 3, namespace: string | string[] = 'db'): Promise<void> {
  const fields: FieldJson[] = [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'price', required: false, type: 'decimal(10,2)' },
    { id: 4, name: 'qty', required: false, type: 'int' },
    { id: 5, name: 'kind', required: true, type: 'string' },
    { id: 6, name: 'address', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'street', required: false, type: 'string' }, { id: 8, name: 'zip', required: false, type: 'string' }] } },
    { id: 9, name: 'tags', required: false, type: { type: 'list', 'element-id': 10, element: 'string', 'element-required': false } },
    { id: 11, name: 'attrs', required: false, type: { type: 'map', 'key-id': 12, key: 'int', 'value-id': 13, value: 'string', 'value-required': false } },
    { id: 14, name: 'day', required: false, type: 'date' }
  ]
  if (formatVersion === 3) fields.push({ id: 15, name: 'level', required: false, type: 'int', 'initial-default': 7, 'write-default': 7 })
  await ice.createTable({ namespace: Array.isArray(namespace) ? namespace : [namespace] }, {
    name,
    schema: { type: 'struct', fields, 'identifier-field-ids': [1] } as never,
    'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 14, 'field-id': 1000, name: 'day', transform: 'identity' }] },
    'write-order': { 'order-id': 1, fields: [{ 'source-id': 2, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] },
    properties: { 'format-version': String(formatVersion) }
  })
}

export async function loadMeta (url: string, namespace: string, table: string, snapshots: 'refs' | 'all' = 'refs'): Promise<Meta> {
  const res = await request(`${url}/v1/namespaces/${encodeURIComponent(namespace)}/tables/${encodeURIComponent(table)}?snapshots=${snapshots}`)
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`load ${namespace}.${table}: ${res.statusCode} ${text}`)
  return (JSON.parse(text) as { metadata: Meta }).metadata
}

/** A deep copy of the current schema, ready to edit into a proposal. */
export function cloneSchema (meta: Meta): SchemaJson {
  const current = meta.schemas.find(s => s['schema-id'] === meta['current-schema-id'])
  if (current === undefined) throw new Error('no current schema')
  return structuredClone(current)
}

/** The field at a dotted path (struct fields only). */
export function fieldByPath (s: SchemaJson, path: string): FieldJson {
  let fields = s.fields
  let found: FieldJson | undefined
  for (const part of path.split('.')) {
    found = fields.find(f => f.name === part)
    if (found === undefined) throw new Error(`no field ${path}`)
    const t = found.type as { type?: string, fields?: FieldJson[] }
    fields = t.type === 'struct' ? t.fields ?? [] : []
  }
  return found as FieldJson
}

/** Every id of a schema with the name it carries there (list elements and map parts included). */
export function schemaIds (s: SchemaJson): Map<number, string> {
  const out = new Map<number, string>()
  const walk = (type: unknown, path: string): void => {
    const t = type as Record<string, unknown>
    if (typeof t !== 'object' || t === null) return
    if (t.type === 'struct') for (const f of t.fields as FieldJson[]) { out.set(f.id, `${path}${f.name}`); walk(f.type, `${path}${f.name}.`) }
    if (t.type === 'list') { out.set(t['element-id'] as number, `${path}element`); walk(t.element, `${path}element.`) }
    if (t.type === 'map') {
      out.set(t['key-id'] as number, `${path}key`)
      out.set(t['value-id'] as number, `${path}value`)
      walk(t.key, `${path}key.`)
      walk(t.value, `${path}value.`)
    }
  }
  walk(s, '')
  return out
}

function highestId (s: SchemaJson): number {
  return Math.max(0, ...schemaIds(s).keys())
}

type Shape = (meta: Meta, schema: SchemaJson | undefined, namespace: string, table: string, extraUpdates?: unknown[]) => unknown

function schemaUpdates (meta: Meta, schema: SchemaJson | undefined, opts: { lastColumnId: boolean, schemaId: boolean }): unknown[] {
  if (schema === undefined) return []
  const s: Record<string, unknown> = { ...schema }
  if (opts.schemaId) s['schema-id'] = Math.max(...meta.schemas.map(x => x['schema-id'])) + 1
  else delete s['schema-id']
  const add: Record<string, unknown> = { action: 'add-schema', schema: s }
  if (opts.lastColumnId) add['last-column-id'] = highestId(schema)
  return [add, { action: 'set-current-schema', 'schema-id': -1 }]
}

/** Commit bodies as each client writes a schema change. */
export const clientShapes: Record<'java' | 'pyiceberg' | 'rust' | 'curl', Shape> = {
  // UpdateRequirements.forUpdateTable: uuid, last-assigned-field-id, current-schema-id; no identifier.
  java: (meta, schema, _ns, _table, extra = []) => ({
    requirements: [
      { type: 'assert-table-uuid', uuid: meta['table-uuid'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': meta['last-column-id'] },
      { type: 'assert-current-schema-id', 'current-schema-id': meta['current-schema-id'] }
    ],
    updates: [...schemaUpdates(meta, schema, { lastColumnId: true, schemaId: true }), ...extra]
  }),
  // UpdateSchema._commit + Transaction: current-schema-id then table uuid; identifier present; no last-column-id.
  pyiceberg: (meta, schema, ns, table, extra = []) => ({
    identifier: { namespace: [ns], name: table },
    requirements: [
      { type: 'assert-current-schema-id', 'current-schema-id': meta['current-schema-id'] },
      { type: 'assert-table-uuid', uuid: meta['table-uuid'] }
    ],
    updates: [...schemaUpdates(meta, schema, { lastColumnId: false, schemaId: true }), ...extra]
  }),
  // UpdateSchemaAction: CurrentSchemaIdMatch only.
  rust: (meta, schema, ns, table, extra = []) => ({
    identifier: { namespace: [ns], name: table },
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': meta['current-schema-id'] }],
    updates: [...schemaUpdates(meta, schema, { lastColumnId: false, schemaId: false }), ...extra]
  }),
  // A hand-written request: no requirements at all.
  curl: (meta, schema, _ns, _table, extra = []) => ({
    requirements: [],
    updates: [...schemaUpdates(meta, schema, { lastColumnId: false, schemaId: false }), ...extra]
  })
}

export interface JsonAnswer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly text: string
  readonly json: unknown
}

export async function postJson (url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const res = await request(url, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers }
  })
  const text = await res.body.text()
  let json: unknown
  try { json = JSON.parse(text) } catch { json = undefined }
  return { status: res.statusCode, headers: res.headers, text, json }
}

export function posts (catalog: RunningCatalog): RunningCatalog['requests'] {
  return catalog.requests.filter(r => r.method === 'POST')
}

export interface Interposer {
  readonly url: string
  /** Holds the next POSTs until `holdPostsUntilGets` GETs have been answered. */
  arm (): void
  /** Answers matching requests itself instead of forwarding them. */
  respond: ((req: http.IncomingMessage) => { status: number, headers?: Record<string, string>, body?: string } | 'drop' | undefined) | undefined
  /** Every request as it arrived: method, target, headers and body bytes. */
  readonly seen: Array<{ method: string, url: string, headers: http.IncomingHttpHeaders, body: Buffer }>
}

/**
 * A transparent HTTP hop in front of the catalog. `arm()` stages a race: POSTs wait until enough
 * base loads (GETs) have been answered, so two commits are judged against the same base.
 */
export async function startInterposer (t: Test, target: string, opts: { holdPostsUntilGets?: number } = {}): Promise<Interposer> {
  let armed = false
  let gets = 0
  let release: () => void = () => {}
  let gate: Promise<void> = Promise.resolve()
  const seen: Interposer['seen'] = []
  const self: Interposer = {
    url: '',
    arm () {
      armed = true
      gets = 0
      gate = new Promise<void>(resolve => {
        release = resolve
        // Never hang a test run if the race is not staged as expected: the assertions then fail.
        setTimeout(resolve, 60_000).unref()
      })
    },
    respond: undefined,
    seen
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        // The transport matrix's `config first` opener is not the test's (transports.ts).
        if (!isOpener(req.headers)) seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) })
        const canned = self.respond?.(req)
        if (canned === 'drop') { req.socket.destroy(); return }
        if (canned !== undefined) {
          res.writeHead(canned.status, canned.headers ?? { 'content-type': 'application/json' })
          res.end(canned.body ?? '')
          return
        }
        if (req.method === 'POST' && armed) await gate
        const headers: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'host' && k !== 'connection' && k !== 'content-length') headers[k] = v
        const up = await request(`${target}${req.url ?? '/'}`, { method: req.method as 'GET', headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined })
        const body = Buffer.from(await up.body.arrayBuffer())
        const out: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding' && k !== 'keep-alive') out[k] = v
        res.writeHead(up.statusCode, out)
        res.end(body)
        if (req.method === 'GET' && armed && ++gets >= (opts.holdPostsUntilGets ?? 0)) {
          armed = false
          release()
        }
      })().catch(() => { res.destroy() })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(() => new Promise<void>(resolve => { server.close(() => resolve()); server.closeAllConnections() }))
  return Object.assign(self, { url: `http://127.0.0.1:${port}` })
}
