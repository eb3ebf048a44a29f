/**
 * Protocol replay: the request sequences the Iceberg Java client (RESTSessionCatalog and
 * RESTTableOperations, 1.9-1.11) sends for Spark's DDL, replayed through iceguard against the
 * embedded catalog under the default policy (builtin:recommended).
 *
 * Each flow is a hand-written fixture under test/fixtures/replay/<flow>.json: steps with method,
 * path, body (templated with values captured from earlier answers, such as the table uuid) and what
 * the Java client needs back. One table-driven runner sends them with the Java client's headers and
 * checks, per step: the status; the answer's shape (CommitTableResponse, LoadTableResult, or an
 * ErrorModel whose code equals the status); the exception Java's ErrorHandlers would raise; JSON
 * Pointer checks on the metadata; 64-bit ids compared as text, never through JSON.parse; the
 * warnings header; and, at the catalog, whether the write arrived byte for byte, arrived with
 * requirements the gate injected, or never arrived. A few explicit assertions per flow follow.
 * docs/protocol.md describes the flows.
 */
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib'
import { isLosslessNumber, isSafeNumber, parse, stringify } from 'lossless-json'
import t, { type Test } from 'tap'
import { request } from 'undici'
import type { RecordedRequest } from '../src/catalog/index.js'
import { startCatalog, startProxy, type RunningCatalog } from './helpers/index.js'
import { startInterposer, type Interposer } from './helpers/gate-fixtures.js'

const DIR = new URL('./fixtures/replay/', import.meta.url)
const BIG_ID = '3055729675574597004'
const WARNINGS_HEADER = 'x-iceguard-warnings'

type Op = 'getConfig' | 'createNamespace' | 'loadTable' | 'createTable' | 'updateTable'
type Upstream = 'exact' | 'injected' | 'none'

interface Expect {
  readonly status: number
  /** The exception Java's ErrorHandlers raise for this answer (errors only). */
  readonly java?: string
  readonly error?: { readonly type: string, readonly messageIncludes?: readonly string[] }
  /** JSON Pointer → expected value (deep, key order ignored). */
  readonly json?: Readonly<Record<string, unknown>>
  readonly present?: readonly string[]
  readonly absent?: readonly string[]
  /** Substrings of the raw answer: how 64-bit ids are checked. */
  readonly text?: readonly string[]
  /** Rule ids in the warnings header; [] means no header. */
  readonly warnings?: readonly string[]
  readonly upstream?: Upstream
  /** Requirements the gate appends (upstream: injected). */
  readonly injected?: readonly unknown[]
}

interface Step {
  readonly name: string
  readonly op: Op
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** Lossless JSON tree: big numbers stay LosslessNumber until written. */
  readonly body?: unknown
  readonly expect: Expect
  /** Variable → JSON Pointer into the answer. */
  readonly capture?: Readonly<Record<string, string>>
}

interface Fixture {
  readonly file: string
  readonly flow: string
  readonly description: string
  readonly steps: readonly Step[]
}

interface StepResult {
  readonly step: Step
  readonly sent?: string
  readonly idempotencyKey?: string
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly text: string
  /** The answer, numbers canonicalised (see `canon`). */
  readonly json: unknown
  /** What the catalog received while this step ran (the gate's base loads included). */
  readonly arrived: readonly RecordedRequest[]
}

interface FlowRun {
  readonly results: readonly StepResult[]
  readonly catalog: RunningCatalog
  readonly vars: Readonly<Record<string, unknown>>
  /** The results of the steps with this name (fixtures name their steps uniquely per flow). */
  step (name: string): StepResult
}

const JAVA_HEADERS = (parse(readFileSync(new URL('_java-client.json', DIR), 'utf8')) as { headers: Record<string, string> }).headers

/** Reads a fixture, expanding `{ "include": "_shared.json" }` steps in place. */
function loadFixture (file: string): Fixture {
  const raw = parse(readFileSync(new URL(file, DIR), 'utf8')) as { flow?: string, description?: string, steps?: unknown[] }
  const steps: Step[] = []
  for (const s of raw.steps ?? []) {
    const include = (s as { include?: unknown }).include
    if (typeof include === 'string') steps.push(...loadFixture(include).steps)
    else steps.push({ ...(s as Step), expect: canon((s as Step).expect) as Expect })
  }
  return { file, flow: raw.flow ?? file, description: raw.description ?? '', steps }
}

/**
 * One comparable form for parsed JSON: numbers a double holds exactly become numbers, the others
 * (64-bit snapshot ids) their decimal text, so answers and fixtures compare without rounding.
 */
function canon (v: unknown): unknown {
  if (isLosslessNumber(v)) return isSafeNumber(v.value) ? Number(v.value) : v.value
  if (Array.isArray(v)) return v.map(canon)
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[k] = canon(x)
    return out
  }
  return v
}

/** `{{name}}` in strings: a whole-string placeholder takes the captured value, others are spliced in. */
function fill (v: unknown, vars: Readonly<Record<string, unknown>>): unknown {
  if (typeof v === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(v)
    const lookup = (name: string): unknown => {
      if (!(name in vars)) throw new Error(`fixture uses {{${name}}} before capturing it`)
      return vars[name]
    }
    if (whole !== null) return lookup(whole[1] as string)
    return v.replace(/\{\{(\w+)\}\}/g, (_m, name: string) => String(lookup(name)))
  }
  if (isLosslessNumber(v)) return v
  if (Array.isArray(v)) return v.map(x => fill(x, vars))
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[k] = fill(x, vars)
    return out
  }
  return v
}

const MISSING = Symbol('missing')

/** RFC 6901 JSON Pointer. */
function pointer (doc: unknown, ptr: string): unknown {
  if (ptr === '') return doc
  let cur: unknown = doc
  for (const raw of ptr.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return MISSING
    cur = (cur as Record<string, unknown>)[key]
  }
  return cur
}

type Handler = 'config' | 'namespace' | 'table' | 'create' | 'commit'

function handlerFor (step: Step): Handler {
  switch (step.op) {
    case 'getConfig': return 'config'
    case 'createNamespace': return 'namespace'
    case 'loadTable': return 'table'
    case 'createTable': return 'create'
    case 'updateTable': return hasAssertCreate(step.body) ? 'create' : 'commit'
  }
}

function hasAssertCreate (body: unknown): boolean {
  const reqs = (body as { requirements?: unknown } | undefined)?.requirements
  return Array.isArray(reqs) && reqs.some(r => (r as { type?: unknown }).type === 'assert-create')
}

/**
 * The exception Java's ErrorHandlers raise, keyed on the body's `error.code` (reference §2.1):
 * tableCommitHandler for commits, createTableErrorHandler for creates and the staged-create commit
 * (409 there means "already exists"), tableErrorHandler for loads, DefaultErrorHandler otherwise.
 */
function javaException (handler: Handler, code: number, type: string): string {
  if (handler === 'commit' || handler === 'create') {
    if (code === 404) return handler === 'create' ? 'NoSuchNamespaceException' : 'NoSuchTableException'
    if (code === 409) return handler === 'create' ? 'AlreadyExistsException' : 'CommitFailedException'
    if (code === 500 || code === 502 || code === 503 || code === 504) return 'CommitStateUnknownException'
  }
  if (handler === 'table' && code === 404) return type === 'NoSuchNamespaceException' ? type : 'NoSuchTableException'
  if (handler === 'namespace' && code === 404) return 'NoSuchNamespaceException'
  if (handler === 'namespace' && code === 409) return 'AlreadyExistsException'
  switch (code) {
    case 400: return type === 'IllegalArgumentException' ? type : 'BadRequestException'
    case 401: return 'NotAuthorizedException'
    case 403: return 'ForbiddenException'
    case 500: return 'ServiceFailureException'
    case 501: return 'UnsupportedOperationException'
    case 503: return 'ServiceUnavailableException'
    default: return 'RESTException'
  }
}

/** A UUIDv7 (RFC 9562), as Java 1.11 sends in Idempotency-Key. */
function uuidv7 (): string {
  const b = randomBytes(16)
  b.writeUIntBE(Date.now(), 0, 6)
  b[6] = ((b[6] as number) & 0x0f) | 0x70
  b[8] = ((b[8] as number) & 0x3f) | 0x80
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

function header (h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name]
  return Array.isArray(v) ? v.join(', ') : v
}

/** The Java client asks for gzip (Apache HttpClient's default) and decodes what comes back. */
function decode (body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(body)
  if (encoding === 'deflate') return inflateSync(body)
  return body
}

const MUTATIONS: ReadonlySet<Op> = new Set(['createNamespace', 'createTable', 'updateTable'])

/** The headers the Java client's commits must still carry when they reach the catalog. */
const CLIENT_HEADERS = ['authorization', 'x-client-version', 'x-client-git-commit-short', 'user-agent', 'accept']

interface Env {
  readonly proxyUrl: string
  readonly catalog: RunningCatalog
  /** A hop in front of the catalog that answers /v1/config itself. */
  readonly hop?: Interposer
}

/** Starts the embedded catalog (recording) and iceguard in front of it, default policy. */
async function startEnv (t: Test, opts: { advertiseIdempotency?: boolean, compress?: boolean } = {}): Promise<Env> {
  const catalog = await startCatalog(t)
  let upstream = opts.compress === true ? await startCompressingHop(t, catalog.url) : catalog.url
  let hop: Interposer | undefined
  if (opts.advertiseIdempotency === true) {
    // A catalog that supports Idempotency-Key says so in /v1/config (REST spec CatalogConfig).
    hop = await startInterposer(t, upstream)
    hop.respond = req => req.method === 'GET' && req.url === '/v1/config'
      ? { status: 200, body: JSON.stringify({ defaults: {}, overrides: {}, 'idempotency-key-lifetime': 'PT30M' }) }
      : undefined
    upstream = hop.url
  }
  const proxy = await startProxy(t, { upstream })
  return { proxyUrl: proxy.url, catalog, ...(hop === undefined ? {} : { hop }) }
}

/**
 * An HTTP hop that gzips JSON answers for clients that accept it, as a reverse proxy or a catalog
 * with response compression does. Java's Apache HttpClient asks for gzip on every request.
 */
async function startCompressingHop (t: Test, target: string): Promise<string> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const headers: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(req.headers)) {
          if (v !== undefined && !['host', 'connection', 'content-length', 'accept-encoding'].includes(k)) headers[k] = v
        }
        const up = await request(`${target}${req.url ?? '/'}`, { method: req.method as 'GET', headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined })
        let body = Buffer.from(await up.body.arrayBuffer())
        const out: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !['connection', 'transfer-encoding', 'keep-alive', 'content-length'].includes(k)) out[k] = v
        if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')) && body.length > 0) {
          body = gzipSync(body)
          out['content-encoding'] = 'gzip'
          out.vary = 'Accept-Encoding'
        }
        out['content-length'] = String(body.length)
        res.writeHead(up.statusCode, out)
        res.end(body)
      })().catch(() => { res.destroy() })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.close(() => resolve()); server.closeAllConnections() }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function runFlow (t: Test, fixture: Fixture, env: Env): Promise<FlowRun> {
  const { catalog } = env
  const vars: Record<string, unknown> = {}
  const results: StepResult[] = []
  let idempotent = false

  for (const [i, step] of fixture.steps.entries()) {
    await t.test(`${i + 1}. ${step.op}: ${step.name}`, async t => {
      const sent = step.body === undefined ? undefined : stringify(fill(step.body, vars)) as string
      const headers: Record<string, string> = { ...JAVA_HEADERS, ...step.headers }
      let idempotencyKey: string | undefined
      if (idempotent && MUTATIONS.has(step.op)) {
        idempotencyKey = uuidv7()
        headers['Idempotency-Key'] = idempotencyKey
      }
      const before = catalog.requests.length
      const res = await request(`${env.proxyUrl}${step.path}`, {
        method: step.method as 'GET',
        headers,
        ...(sent === undefined ? {} : { body: sent })
      })
      const raw = decode(Buffer.from(await res.body.arrayBuffer()), header(res.headers, 'content-encoding'))
      const text = raw.toString('utf8')
      const arrived = catalog.requests.slice(before)
      const expect = fill(step.expect, vars) as Expect

      t.equal(res.statusCode, expect.status, `status ${expect.status}`)
      t.match(header(res.headers, 'content-type') ?? '', /^application\/json/, 'answers JSON')
      let parsed: unknown
      try {
        parsed = parse(text)
      } catch (err) {
        t.fail(`answer is not JSON: ${(err as Error).message}: ${text.slice(0, 200)}`)
      }
      const json = canon(parsed)
      const result: StepResult = { step, sent, idempotencyKey, status: res.statusCode, headers: res.headers, text, json, arrived }
      results.push(result)

      if (res.statusCode >= 400) checkError(t, step, expect, json, res.statusCode)
      else checkSuccess(t, step, json)
      for (const [ptr, want] of Object.entries(expect.json ?? {})) {
        t.strictSame(pointer(json, ptr), want, `${ptr}`)
      }
      for (const ptr of expect.present ?? []) t.not(pointer(json, ptr), MISSING, `${ptr} is present`)
      for (const ptr of expect.absent ?? []) t.equal(pointer(json, ptr), MISSING, `${ptr} is absent`)
      // Exact digits of 64-bit ids: compared in the bytes, where no parser can round them.
      for (const s of expect.text ?? []) t.ok(text.includes(s), `answer bytes contain ${s}`)
      checkWarnings(t, expect, header(res.headers, WARNINGS_HEADER))
      checkArrival(t, env, step, expect, result)

      for (const [name, ptr] of Object.entries(step.capture ?? {})) {
        const v = pointer(json, ptr)
        t.not(v, MISSING, `captured ${name} from ${ptr}`)
        vars[name] = v
      }
      // Java 1.11 sends Idempotency-Key on mutations only when the catalog advertises a lifetime.
      if (step.op === 'getConfig' && res.statusCode === 200) {
        idempotent = pointer(json, '/idempotency-key-lifetime') !== MISSING
      }
    })
  }
  return {
    results,
    catalog,
    vars,
    step (name) {
      const found = results.find(r => r.step.name === name)
      if (found === undefined) throw new Error(`no step named ${name}`)
      return found
    }
  }
}

function checkError (t: Test, step: Step, expect: Expect, json: unknown, status: number): void {
  // IcebergErrorResponse: { error: ErrorModel }, nothing else, code equal to the status (Java reads the code).
  t.strictSame(Object.keys(json as object), ['error'], 'IcebergErrorResponse has only `error`')
  const error = (json as { error?: { message?: unknown, type?: unknown, code?: unknown } }).error ?? {}
  t.equal(error.code, status, 'error.code equals the HTTP status')
  t.type(error.message, 'string', 'error.message is a string')
  t.type(error.type, 'string', 'error.type is a string')
  const message = String(error.message)
  const type = String(error.type)
  // PyIceberg shows only `type: message`: the message must say what and where on its own.
  t.ok(message.length > 20 && !/undefined|\[object /.test(message), `message stands alone: ${message}`)
  if (expect.error !== undefined) {
    t.equal(type, expect.error.type, `error.type ${expect.error.type}`)
    for (const s of expect.error.messageIncludes ?? []) t.ok(message.includes(s), `message names ${s}`)
  }
  if (expect.java !== undefined) {
    t.equal(javaException(handlerFor(step), Number(error.code), type), expect.java, `Java raises ${expect.java}`)
  }
  if (step.op === 'updateTable') {
    // A refusal is never "state unknown": 5xx makes Java keep the files it wrote.
    t.ok(status < 500, 'a refused commit is a 4xx')
  }
}

function checkSuccess (t: Test, step: Step, json: unknown): void {
  if (step.op !== 'loadTable' && step.op !== 'createTable' && step.op !== 'updateTable') return
  const body = json as Record<string, unknown>
  t.type(body.metadata, 'object', 'has metadata')
  t.ok(body.metadata !== null && !Array.isArray(body.metadata), 'metadata is an object')
  const staged = step.op === 'createTable' && (step.body as { 'stage-create'?: unknown } | undefined)?.['stage-create'] === true
  if (staged) {
    // LoadTableResult: "May be null if the table is staged as part of a transaction".
    t.equal(body['metadata-location'], null, 'a staged create has no metadata-location')
  } else {
    t.type(body['metadata-location'], 'string', 'has metadata-location')
    t.ok(String(body['metadata-location']).length > 0, 'metadata-location is not empty')
  }
}

function checkWarnings (t: Test, expect: Expect, value: string | undefined): void {
  if (expect.warnings === undefined) return
  if (expect.warnings.length === 0) {
    t.equal(value, undefined, 'no warnings header')
    return
  }
  for (const rule of expect.warnings) t.ok(value?.includes(rule) === true, `warnings header names ${rule}`)
}

function pathOf (url: string): string {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}

/** What reached the catalog during the step. */
function checkArrival (t: Test, env: Env, step: Step, expect: Expect, result: StepResult): void {
  const path = pathOf(step.path)
  const writes = result.arrived.filter(r => r.method === step.method && r.method !== 'GET' && pathOf(r.url) === path)

  if (step.op === 'getConfig' && env.hop !== undefined) {
    const seen = env.hop.seen.filter(r => r.method === 'GET' && r.url === step.path)
    t.equal(seen.length, 1, 'the config request reached the catalog\'s front')
    return
  }
  if (step.method === 'GET') {
    // Pass-through: the same request, path and query as sent, with the caller's credentials.
    const same = result.arrived.filter(r => r.method === 'GET' && r.url === step.path)
    t.equal(same.length, 1, `the catalog received GET ${step.path} once, unchanged`)
    const got = same[0]
    if (got !== undefined) t.equal(header(got.headers, 'authorization'), JAVA_HEADERS.Authorization, 'Authorization passed through')
    return
  }

  // The gate's own base loads carry the caller's credentials, never the commit's Idempotency-Key.
  for (const load of result.arrived.filter(r => r.method === 'GET')) {
    t.equal(header(load.headers, 'authorization'), JAVA_HEADERS.Authorization, `base load ${load.url} carries the caller's Authorization`)
    t.equal(load.headers['idempotency-key'], undefined, `base load ${load.url} carries no Idempotency-Key`)
  }
  if (expect.upstream === undefined) return
  if (expect.upstream === 'none') {
    t.equal(writes.length, 0, 'the refused write never reached the catalog')
    return
  }
  t.equal(writes.length, 1, 'the write reached the catalog once')
  const got = writes[0]
  if (got === undefined || result.sent === undefined) return
  for (const name of CLIENT_HEADERS) {
    t.equal(header(got.headers, name), header(lowerKeys(JAVA_HEADERS), name), `${name} arrived unchanged`)
  }
  t.equal(got.headers['idempotency-key'], result.idempotencyKey, result.idempotencyKey === undefined
    ? 'no Idempotency-Key (the catalog does not advertise one)'
    : 'Idempotency-Key arrived unchanged')
  const sentBytes = Buffer.from(result.sent, 'utf8')
  if (expect.upstream === 'exact') {
    t.ok(got.body.equals(sentBytes), 'the catalog received the exact bytes sent')
    return
  }
  // Injected: the gate appended requirements; everything else must be what the client sent.
  t.notOk(got.body.equals(sentBytes), 'the body was rewritten (requirements injected)')
  const sentJson = parse(result.sent) as { requirements?: unknown[], updates?: unknown[] }
  const gotJson = parse(got.body.toString('utf8')) as { requirements?: unknown[], updates?: unknown[] }
  t.strictSame(canon(gotJson.requirements), canon([...(sentJson.requirements ?? []), ...(expect.injected ?? [])]),
    'requirements: the client\'s, in order, then the injected ones')
  t.strictSame(canon(gotJson.updates), canon(sentJson.updates), 'updates unchanged')
  t.strictSame(Object.keys(gotJson as object).sort(), Object.keys(sentJson as object).sort(), 'no other keys added or lost')
  for (const id of result.sent.match(/\d{16,}/g) ?? []) {
    t.ok(got.body.toString('utf8').includes(id), `64-bit id ${id} written back with every digit`)
  }
}

function lowerKeys (h: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]))
}

function posts (run: FlowRun, table: string): RecordedRequest[] {
  return run.catalog.requests.filter(r => r.method === 'POST' && pathOf(r.url).endsWith(`/tables/${table}`))
}

function updateOf (sent: string | undefined, action: string): Record<string, unknown> | undefined {
  const body = canon(parse(sent ?? '{}')) as { updates?: Array<Record<string, unknown>> }
  return body.updates?.find(u => u.action === action)
}

/** A few assertions per flow that a generic step check cannot express. */
const EXPLICIT: Record<string, (t: Test, run: FlowRun) => void> = {
  'alter-add-column.json' (t, run) {
    const commit = run.step('SchemaUpdate.commit: updateTable')
    const add = updateOf(commit.sent, 'add-schema') as { 'last-column-id': number, schema: { fields: Array<{ id: number }> } }
    t.equal(add['last-column-id'], Math.max(...add.schema.fields.map(f => f.id)), 'Java sends last-column-id = highest id of the new schema')
    const mapping = JSON.parse(String(pointer(commit.json, '/metadata/properties/schema.name-mapping.default'))) as unknown[]
    t.strictSame(mapping.at(-1), { 'field-id': 5, names: ['note'] }, 'the updated name mapping was committed with the schema')
    t.equal(posts(run, 'events').length, 2, 'the catalog received the properties commit and the accepted ADD COLUMN, not the stale replay')
  },
  'alter-column-type.json' (t, run) {
    const refused = run.step('long -> int: refused before the catalog')
    const stack = pointer(refused.json, '/error/stack') as string[]
    t.ok(Array.isArray(stack) && stack.some(l => l.includes('TYPE_PROMOTION_VALID') && l.includes('field id 1')), 'stack has one line per finding, with the field id')
    t.notOk(posts(run, 'events').some(p => p.body.toString('utf8').includes('"schema-id":2')), 'no narrowing schema ever reached the catalog')
  },
  'rename-column.json' (t, run) {
    const commit = run.step('rename: updateTable')
    t.match(header(commit.headers, WARNINGS_HEADER) ?? '', /COLUMN_NO_RENAME \(qty, field id 2/, 'the warning names the column and its id')
    const mapping = String(pointer(commit.json, '/metadata/properties/schema.name-mapping.default'))
    t.ok(mapping.includes('"qty","quantity"'), 'the name mapping maps both names to field 2')
  },
  'drop-column.json' (t, run) {
    const commit = run.step('drop name: updateTable')
    const add = updateOf(commit.sent, 'add-schema') as { 'last-column-id': number }
    t.ok(add['last-column-id'] < Number(pointer(commit.json, '/metadata/last-column-id')),
      'Java sends a last-column-id lower than the table\'s, and the table keeps its own')
    const refused = run.step('drop and re-add price in one commit: refused')
    t.match(String(pointer(refused.json, '/error/message')), /id 5.*id 3|id 3.*id 5/, 'the refusal names both the new and the dropped id')
  },
  'revert-schema.json' (t, run) {
    const commit = run.step('DROP COLUMNS back to schema 0: set-current-schema 0 only')
    t.equal(updateOf(commit.sent, 'add-schema'), undefined, 'the revert carries no add-schema')
    t.equal((pointer(commit.json, '/metadata/schemas') as unknown[]).length, 2, 'no new schema: the table switched back to schema 0')
    const warnings = header(commit.headers, WARNINGS_HEADER) ?? ''
    t.equal(warnings.split('COLUMN_NO_DROP').length - 1, 3, 'one drop warning per column the revert removes')
  },
  'create-table-as-select.json' (t, run) {
    const commit = run.step('commitTransaction (UpdateType.CREATE): updateTable with assert-create')
    const arrived = commit.arrived.find(r => r.method === 'POST')
    t.ok(arrived?.body.toString('utf8').includes(`"snapshot-id":${BIG_ID}`), 'the catalog received the 64-bit id with every digit')
    t.notOk(commit.text.includes('3055729675574597000'), 'no rounded id anywhere in the answer')
    t.equal(posts(run, 'daily').length, 1, 'only the first assert-create commit reached the catalog; the gate answered the concurrent one')
    const refused = run.step('older client: the create commit carries timestamp_ns on a v2 table: 400, never 409')
    t.not(refused.status, 409, 'a rule refusal of a staged create is never 409 (Java would read "already exists")')
  },
  'create-or-replace-table.json' (t, run) {
    const commit = run.step('commitTransaction (UpdateType.REPLACE): updateTable')
    const arrived = commit.arrived.find(r => r.method === 'POST')
    const requirements = (canon(parse(arrived?.body.toString('utf8') ?? '{}')) as { requirements?: Array<{ type: string }> }).requirements ?? []
    t.strictSame(requirements.map(r => r.type), [
      'assert-table-uuid', 'assert-last-assigned-field-id', 'assert-last-assigned-partition-id', 'assert-current-schema-id'
    ], 'the replace keeps Java\'s requirements and gains the schema the gate judged')
    const snapshots = pointer(commit.json, '/metadata/snapshots') as Array<Record<string, unknown>>
    t.strictSame(snapshots.map(s => s['snapshot-id']), [BIG_ID], 'the replaced table keeps its snapshot history, id exact')
  },
  'missing-table.json' (t, run) {
    t.equal(posts(run, 'ghost').length, 0, 'no commit reached the catalog for a missing table')
    const commit = run.step('commit to the dropped table: 404')
    t.ok(commit.arrived.some(r => r.method === 'GET' && r.url.startsWith('/v1/namespaces/replay/tables/ghost?')),
      'the gate asked the catalog for the table before answering')
  }
}

const FLOWS = readdirSync(DIR).filter(f => f.endsWith('.json') && !f.startsWith('_')).sort()

t.test('a fixture for every Java flow', async t => {
  t.strictSame(FLOWS, [
    'alter-add-column.json', 'alter-column-type.json', 'create-or-replace-table.json', 'create-table-as-select.json',
    'drop-column.json', 'missing-table.json', 'rename-column.json', 'revert-schema.json'
  ])
  for (const file of FLOWS) {
    const fixture = loadFixture(file)
    t.ok(fixture.description.length > 0, `${file} says what Java does`)
    t.ok(EXPLICIT[file] !== undefined, `${file} has explicit assertions`)
    t.equal(new Set(fixture.steps.map(s => s.name)).size, fixture.steps.length, `${file}: step names are unique`)
  }
})

for (const file of FLOWS) {
  t.test(`replay ${file}`, async t => {
    const fixture = loadFixture(file)
    const run = await runFlow(t, fixture, await startEnv(t))
    EXPLICIT[file]?.(t, run)
  })
}

t.test('Idempotency-Key: sent when the catalog advertises it, kept on the commit, never on the base load', async t => {
  for (const file of ['alter-add-column.json', 'create-table-as-select.json', 'create-or-replace-table.json']) {
    await t.test(file, async t => {
      const run = await runFlow(t, loadFixture(file), await startEnv(t, { advertiseIdempotency: true }))
      const mutations = run.results.filter(r => MUTATIONS.has(r.step.op))
      t.ok(mutations.length > 0 && mutations.every(r => r.idempotencyKey !== undefined), 'every mutation carried a key')
      t.equal(new Set(mutations.map(r => r.idempotencyKey)).size, mutations.length, 'a new key per logical request')
      // checkArrival compared the key at the catalog for every forwarded write and base load.
    })
  }
})

t.test('an upstream that gzips for Java\'s Accept-Encoding: the gate still reads its base', async t => {
  for (const file of ['alter-add-column.json', 'create-or-replace-table.json']) {
    await t.test(file, async t => {
      const run = await runFlow(t, loadFixture(file), await startEnv(t, { compress: true }))
      t.ok(run.results.some(r => r.step.op === 'loadTable' && r.status === 200), 'the client decoded gzip answers')
    })
  }
})
