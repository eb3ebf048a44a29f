/**
 * The benchmark's upstream catalog: a plain node:http server that answers from Buffers built
 * once at start-up, so that it costs as little as possible per request and every proxy is
 * compared against the same upstream.
 *
 *   node --import tsx bench/stub/upstream-stub.ts --port 0
 *
 * Tables (namespace `bench`, with or without a `{prefix}` segment after /v1):
 *   small     50 columns, 3 snapshots, 1 schema                       (~9 KB LoadTableResult)
 *   large     50 columns, snapshots until the result is ~1 MB
 *   evolving  50 columns, 20 schemas of history, 3 snapshots          (the schema-commit base)
 * Routes: GET /v1/config; GET|HEAD|POST .../tables/{t}; anything else 404 (Iceberg ErrorModel).
 * loadTable honours `snapshots=refs` and answers `If-None-Match` with 304 when the ETag matches
 * (REST spec, loadTable); commits answer 200 with a CommitTableResponse.
 * Bench-only endpoints: GET /__stub/stats (request counters), POST /__stub/reset.
 * It prints one JSON line `{"port":N}` when listening and exits when stdin closes.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import { parseArgs } from 'node:util'
import {
  afterSchemaCommit, catalogConfig, commitTableResponse, loadTableResult, sizedTable, type TableOptions
} from '../lib/fixtures.js'

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    columns: { type: 'string', default: '50' },
    'large-bytes': { type: 'string', default: String(1024 * 1024) },
    // An https stub (BENCH_UPSTREAM_TLS): PEM files of its key and certificate.
    'tls-key': { type: 'string' },
    'tls-cert': { type: 'string' }
  }
})
const columns = Number(args.columns)

interface Variant { body: Buffer, etag: string }
interface Table { all: Variant, refs: Variant, dataCommit: Buffer, schemaCommit: Buffer }

function variant (json: string): Variant {
  const body = Buffer.from(json)
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
}

function table (o: TableOptions): Table {
  return {
    all: variant(loadTableResult(o)),
    refs: variant(loadTableResult({ ...o, refsOnly: true })),
    dataCommit: Buffer.from(commitTableResponse({ ...o, snapshots: o.snapshots + 1 })),
    schemaCommit: Buffer.from(commitTableResponse(afterSchemaCommit(o)))
  }
}

const TABLE_OPTIONS: Record<string, TableOptions> = {
  small: { table: 'small', columns, snapshots: 3 },
  large: sizedTable('large', columns, Number(args['large-bytes'])),
  evolving: { table: 'evolving', columns, snapshots: 3, schemas: 20 }
}
const tables = new Map(Object.entries(TABLE_OPTIONS).map(([name, o]) => [name, table(o)]))
const config = Buffer.from(catalogConfig())

function newCounters () {
  return { config: 0, loadTable: 0, loadTableRefs: 0, notModified: 0, commit: 0, schemaCommit: 0, commitBytes: 0, other: 0 }
}
let counters = newCounters()

function errorBody (code: number, type: string, message: string): Buffer {
  return Buffer.from(JSON.stringify({ error: { message, type, code } }))
}
const noSuchTable = errorBody(404, 'NoSuchTableException', 'Table does not exist: the benchmark stub serves small, large and evolving')
const noRoute = errorBody(404, 'NotFoundException', 'The benchmark stub does not serve this route')

function send (res: http.ServerResponse, status: number, body: Buffer, etag?: string): void {
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': body.length }
  if (etag !== undefined) headers.etag = etag
  res.writeHead(status, headers)
  res.end(body)
}

const TABLE_PATH = /^\/v1\/(?:[^/]+\/)?namespaces\/[^/]+\/tables\/([^/]+)$/

function handle (req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  if (path === '/v1/config' && req.method === 'GET') {
    counters.config++
    return send(res, 200, config)
  }
  const m = TABLE_PATH.exec(path)
  if (m !== null) {
    const t = tables.get(decodeURIComponent(m[1] ?? ''))
    if (t === undefined) {
      req.resume()
      return send(res, 404, noSuchTable)
    }
    if (req.method === 'GET' || req.method === 'HEAD') return loadTable(req, res, t, q === -1 ? '' : url.slice(q + 1))
    if (req.method === 'POST') return commit(req, res, t)
  }
  if (path === '/__stub/stats') return send(res, 200, Buffer.from(JSON.stringify(counters)))
  if (path === '/__stub/reset' && req.method === 'POST') {
    counters = newCounters()
    req.resume()
    return send(res, 200, Buffer.from('{}'))
  }
  counters.other++
  req.resume()
  send(res, 404, noRoute)
}

function loadTable (req: http.IncomingMessage, res: http.ServerResponse, t: Table, query: string): void {
  counters.loadTable++
  const refs = new URLSearchParams(query).get('snapshots') === 'refs'
  if (refs) counters.loadTableRefs++
  const v = refs ? t.refs : t.all
  if (req.headers['if-none-match'] === v.etag) {
    counters.notModified++
    res.writeHead(304, { etag: v.etag })
    res.end()
    return
  }
  if (req.method === 'HEAD') {
    res.writeHead(204)
    res.end()
    return
  }
  send(res, 200, v.body, v.etag)
}

// Token that only a schema change carries; a cheap scan, so the stub stays cheap per commit.
const ADD_SCHEMA = Buffer.from('"add-schema"')

function commit (req: http.IncomingMessage, res: http.ServerResponse, t: Table): void {
  counters.commit++
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks)
    counters.commitBytes += body.length
    const isSchema = body.includes(ADD_SCHEMA)
    if (isSchema) counters.schemaCommit++
    send(res, 200, isSchema ? t.schemaCommit : t.dataCommit)
  })
}

const serverOptions = { keepAliveTimeout: 120_000, requestTimeout: 0 }
const server = args['tls-key'] !== undefined && args['tls-cert'] !== undefined
  ? https.createServer({ ...serverOptions, key: readFileSync(args['tls-key']), cert: readFileSync(args['tls-cert']) }, handle)
  : http.createServer(serverOptions, handle)
server.maxRequestsPerSocket = 0
server.listen(Number(args.port), '127.0.0.1', () => {
  const address = server.address()
  const sizes = Object.fromEntries([...tables].map(([k, v]) => [k, v.all.body.length]))
  process.stdout.write(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0, sizes }) + '\n')
})

function stop (): void {
  server.close()
  server.closeAllConnections()
  setTimeout(() => process.exit(0), 200).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.on('error', stop)
process.stdin.resume()
