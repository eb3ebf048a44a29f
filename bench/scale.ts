/**
 * `npm run bench:scale`: how the CPU of one schema commit through iceguard grows with the table's
 * schema history and width, what the schema-history admin API costs, and iceguard's RSS.
 *
 * iceguard runs in a child process (`node --import tsx src/main/server.ts`, from --iceguard DIR, by
 * default this project: point it at another checkout to compare) in front of a small native-JSON
 * catalog that runs in this process, so the CPU measured is iceguard's alone: the run time of all
 * its threads (`/proc/<pid>/task/<tid>/schedstat`, ns) around each request.
 *
 * - history: one table of --columns (200) columns; before each checkpoint k (--history, default
 *   1,100,500,1000) the catalog's table is brought to k-3 schemas directly (not through iceguard),
 *   then 2 commits through iceguard warm it and --window (9) more are measured (median). Each
 *   commit is a step of the cycle add a column (under a dropped column's name) / rename / drop,
 *   as Java sends it. Reported with the loadTable answer's size, and the ratios of the largest
 *   checkpoint to the one before in CPU and in size.
 * - width: fresh tables of --widths (10,100,1000,10000) columns, --reps (3) each: commit #1 (cold)
 *   then commit #2 (measured), median.
 * - history API: `GET /admin/v1/.../schemas` on the largest history table: the first answer, and
 *   every page followed through `next-page-token` (where the server pages).
 * - RSS of iceguard after each phase (/proc/<pid>/status VmRSS, VmHWM).
 *
 * Linux only (procfs). Only 127.0.0.1 is contacted. No assertion: figures for docs/performance.md.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values: args } = parseArgs({
  options: {
    iceguard: { type: 'string', default: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..') },
    columns: { type: 'string', default: '200' },
    history: { type: 'string', default: '1,100,500,1000' },
    widths: { type: 'string', default: '10,100,1000,10000' },
    reps: { type: 'string', default: '3' },
    window: { type: 'string', default: '9' },
    label: { type: 'string', default: '' },
    phases: { type: 'string', default: 'history,width,api' },
    /** Extra iceguard flags, space-separated (`--upstream-max-response 512MiB`), and node flags. */
    'server-args': { type: 'string', default: '' },
    'node-args': { type: 'string', default: '' },
    /** A folder for a V8 CPU profile of iceguard's process (--cpu-prof), written when it stops. */
    profile: { type: 'string' }
  }
})
const nums = (s: string): number[] => s.split(',').map(Number).filter(n => Number.isFinite(n) && n > 0)

// ---------------------------------------------------------------- the catalog (this process)

type Json = Record<string, unknown>
interface Field { id: number, name: string, required: boolean, type: string }
interface Table { meta: Json, text: string, etag: string, version: number }

const tables = new Map<string, Table>()
const TYPES = ['long', 'string', 'int', 'double', 'boolean', 'date', 'timestamp', 'decimal(10, 2)']

function serialise (t: Table): void {
  t.version++
  t.text = JSON.stringify({ 'metadata-location': `file:///scale/${t.version}.json`, metadata: t.meta, config: {} })
  t.etag = `"v${t.version}"`
}

function createTable (name: string, width: number): Table {
  const fields: Field[] = Array.from({ length: width }, (_, i) => ({ id: i + 1, name: `c_${i + 1}`, required: false, type: TYPES[i % TYPES.length] as string }))
  const meta: Json = {
    'format-version': 2,
    'table-uuid': `00000000-0000-4000-8000-${String(tables.size + 1).padStart(12, '0')}`,
    location: `file:///scale/${name}`,
    'last-sequence-number': 0,
    'last-updated-ms': 1700000000000,
    'last-column-id': width,
    'current-schema-id': 0,
    schemas: [{ type: 'struct', 'schema-id': 0, fields }],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'last-partition-id': 999,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {},
    'current-snapshot-id': -1,
    refs: {},
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': []
  }
  const t: Table = { meta, text: '', etag: '', version: 0 }
  serialise(t)
  tables.set(name, t)
  return t
}

/** Applies add-schema / set-current-schema as a catalog does (requirements checked by the caller). */
function addSchema (t: Table, fields: Field[], lastColumnId: number): void {
  const schemas = t.meta.schemas as Json[]
  const id = Math.max(...schemas.map(s => s['schema-id'] as number)) + 1
  schemas.push({ type: 'struct', 'schema-id': id, fields })
  t.meta['current-schema-id'] = id
  t.meta['last-column-id'] = Math.max(t.meta['last-column-id'] as number, lastColumnId)
}

function startCatalog (): Promise<{ url: string, close: () => void }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const send = (status: number, body: string, headers: Record<string, string> = {}): void => {
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers })
        res.end(body)
      }
      const url = new URL(req.url ?? '/', 'http://x')
      if (url.pathname === '/v1/config') return send(200, '{"defaults":{},"overrides":{}}')
      const m = /^\/v1\/namespaces\/scale\/tables\/([^/]+)$/.exec(url.pathname)
      const t = m === null ? undefined : tables.get(m[1] as string)
      if (t === undefined) return send(404, '{"error":{"message":"no such table","type":"NoSuchTableException","code":404}}')
      if (req.method === 'GET') {
        if (req.headers['if-none-match'] === t.etag) { res.writeHead(304, { etag: t.etag }); return res.end() }
        return send(200, t.text, { etag: t.etag })
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { requirements: Json[], updates: Json[] }
      for (const r of body.requirements) {
        const ok = r.type === 'assert-table-uuid'
          ? r.uuid === t.meta['table-uuid']
          : r.type === 'assert-current-schema-id'
            ? r['current-schema-id'] === t.meta['current-schema-id']
            : r.type === 'assert-last-assigned-field-id' ? r['last-assigned-field-id'] === t.meta['last-column-id'] : true
        if (!ok) return send(409, `{"error":{"message":"Requirement failed: ${String(r.type)}","type":"CommitFailedException","code":409}}`)
      }
      const add = body.updates.find(u => u.action === 'add-schema') as { schema: { fields: Field[] }, 'last-column-id'?: number } | undefined
      if (add !== undefined) addSchema(t, add.schema.fields, Math.max(add['last-column-id'] ?? 0, ...add.schema.fields.map(f => f.id)))
      serialise(t)
      send(200, JSON.stringify({ 'metadata-location': `file:///scale/${t.version}.json`, metadata: t.meta }))
    })
  })
  return new Promise(resolve => server.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => { server.closeAllConnections(); server.close() } })
  }))
}

// ---------------------------------------------------------------- the client's side of a table

/** What a client knows of a table, and the next step of its add / rename / drop cycle. */
class Evolving {
  step = 0
  dropped: string[] = []
  constructor (readonly name: string, public fields: Field[], public lastColumnId: number, public schemaId = 0, readonly uuid: string) {}

  /** The next schema: add (under a dropped name when there is one), rename, or drop. */
  next (): { fields: Field[], lastColumnId: number } {
    const kind = this.step++ % 3
    let fields = this.fields
    let last = this.lastColumnId
    if (kind === 0) {
      last++
      fields = [...fields, { id: last, name: this.dropped.shift() ?? `c_${last}`, required: false, type: 'string' }]
    } else if (kind === 1) {
      const i = 1 + (this.step % (fields.length - 1))
      const f = fields[i] as Field
      fields = fields.map((x, j) => j === i ? { ...f, name: `${f.name.split('__')[0] as string}__r${this.step}` } : x)
    } else {
      const i = 1 + (this.step % (fields.length - 1))
      this.dropped.push((fields[i] as Field).name)
      fields = fields.filter((_, j) => j !== i)
    }
    return { fields, lastColumnId: last }
  }

  accept (next: { fields: Field[], lastColumnId: number }): void {
    this.fields = next.fields
    this.lastColumnId = next.lastColumnId
    this.schemaId++
  }

  commitBody (next: { fields: Field[], lastColumnId: number }): string {
    return JSON.stringify({
      identifier: { namespace: ['scale'], name: this.name },
      requirements: [
        { type: 'assert-table-uuid', uuid: this.uuid },
        { type: 'assert-current-schema-id', 'current-schema-id': this.schemaId },
        { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': this.lastColumnId }
      ],
      updates: [
        { action: 'add-schema', schema: { type: 'struct', 'schema-id': this.schemaId + 1, fields: next.fields }, 'last-column-id': next.lastColumnId },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
    })
  }
}

function evolving (name: string, width: number): Evolving {
  const t = createTable(name, width)
  const schema = (t.meta.schemas as Json[])[0] as { fields: Field[] }
  return new Evolving(name, schema.fields, width, 0, t.meta['table-uuid'] as string)
}

/** Steps the catalog's table directly, as other writers would: no request through iceguard. */
function jump (e: Evolving, steps: number): void {
  const t = tables.get(e.name) as Table
  for (let i = 0; i < steps; i++) {
    const next = e.next()
    addSchema(t, next.fields, next.lastColumnId)
    e.accept(next)
  }
  serialise(t)
}

// ---------------------------------------------------------------- iceguard and its CPU

function cpuNs (pid: number): number {
  let ns = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try { ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) } catch {}
  }
  return ns
}

function rss (pid: number): { rssMB: number, hwmMB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMB: Math.round(kb('VmRSS') / 1024), hwmMB: Math.round(kb('VmHWM') / 1024) }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

function call (base: string, method: string, p: string, body?: string): Promise<{ status: number, body: Buffer }> {
  return new Promise((resolve, reject) => {
    const u = new URL(p, base)
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) { headers['content-type'] = 'application/json'; headers['content-length'] = String(Buffer.byteLength(body)) }
    const req = http.request({ agent, host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function measured (pid: number, base: string, method: string, p: string, body?: string): Promise<{ ms: number, status: number, body: Buffer }> {
  const before = cpuNs(pid)
  const res = await call(base, method, p, body)
  return { ms: (cpuNs(pid) - before) / 1e6, ...res }
}

async function freePort (): Promise<number> {
  const server = net.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>(resolve => server.close(() => resolve()))
  return port
}

/** iceguard from `dir`, logging warnings only (a log line per request would be measured too). */
async function startIceguard (dir: string, upstream: string): Promise<{ child: ChildProcess, url: string }> {
  const port = await freePort()
  const profile = args.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', path.resolve(args.profile)]
  const words = (text: string): string[] => text.split(' ').filter(w => w !== '')
  const child = spawn(process.execPath, [...profile, ...words(args['node-args']), '--import', 'tsx', 'src/main/server.ts', '--upstream', upstream, '--port', String(port), '--host', '127.0.0.1', ...words(args['server-args'])],
    { cwd: dir, env: { ...process.env, ICEGUARD_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`iceguard exited (${child.exitCode}) before listening`)
    try {
      if ((await call(url, 'GET', '/healthz')).status === 200) return { child, url }
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error('iceguard did not answer /healthz within 60 s')
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const f1 = (n: number): string => n.toFixed(1)

async function commit (pid: number, base: string, e: Evolving): Promise<number> {
  const next = e.next()
  const res = await measured(pid, base, 'POST', `/v1/namespaces/scale/tables/${e.name}`, e.commitBody(next))
  if (res.status !== 200) throw new Error(`commit on ${e.name} answered ${res.status}: ${res.body.toString().slice(0, 300)}`)
  e.accept(next)
  return res.ms
}

// ---------------------------------------------------------------- the run

const catalog = await startCatalog()
const { child, url } = await startIceguard(args.iceguard, catalog.url)
const pid = child.pid as number
const stop = (): void => { child.kill('SIGTERM'); catalog.close(); agent.destroy() }
process.on('exit', stop)
try {
  const windowSize = Number(args.window)
  const out: string[] = [`## bench:scale ${args.label} (${args.iceguard === path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..') ? 'this checkout' : args.iceguard})`, '']
  const warm = evolving('warmup', 50)
  for (let i = 0; i < 40; i++) await commit(pid, url, warm)
  out.push(`RSS after start and 40 warm-up commits: ${JSON.stringify(rss(pid))}`, '')

  out.push(`### History (${args.columns} columns; median CPU of ${windowSize} commits through iceguard after 2 unmeasured ones)`, '',
    '| k (schemas) | loadTable answer | CPU per commit (ms) | RSS (MB) |', '|---|---|---|---|')
  const h = evolving('history', Number(args.columns))
  const rows: Array<{ k: number, bytes: number, ms: number }> = []
  const phases = new Set(args.phases.split(','))
  for (const k of phases.has('history') ? nums(args.history) : []) {
    const have = (tables.get('history')?.meta.schemas as unknown[]).length
    const target = Math.max(have, k - windowSize - 2)
    if (target > have) jump(h, target - have)
    const times: number[] = []
    for (let i = 0; i < windowSize + 2; i++) {
      const ms = await commit(pid, url, h)
      if (i >= 2) times.push(ms)
    }
    const bytes = Buffer.byteLength((tables.get('history') as Table).text)
    const k2 = (tables.get('history')?.meta.schemas as unknown[]).length
    rows.push({ k: k2, bytes, ms: median(times) })
    out.push(`| ${k2} | ${f1(bytes / 1024 / 1024)} MB | ${f1(median(times))} | ${rss(pid).rssMB} |`)
  }
  // Each checkpoint against the one nearest to a tenth of it (k=1,000 against k=100), then the last two.
  const b = rows[rows.length - 1]
  const tenth = rows.reduce((best, r) => b !== undefined && Math.abs(r.k - b.k / 10) < Math.abs(best.k - b.k / 10) ? r : best, rows[0] as typeof rows[0])
  for (const a of new Set([tenth, rows[rows.length - 2]])) {
    if (a === undefined || b === undefined || a === b) continue
    out.push('', `Ratio k=${b.k} vs k=${a.k}: CPU ×${(b.ms / a.ms).toFixed(2)}, metadata size ×${(b.bytes / a.bytes).toFixed(2)}`)
  }

  if (phases.has('width')) {
    out.push('', `### Width (median of ${args.reps}: commit #2 on a fresh table, adding one optional column)`, '',
      '| columns | cold commit #1 (ms) | commit #2 (ms) |', '|---|---|---|')
  }
  for (const w of phases.has('width') ? nums(args.widths) : []) {
    const cold: number[] = []
    const hot: number[] = []
    for (let r = 0; r < Number(args.reps); r++) {
      const e = evolving(`w${w}_${r}`, w)
      e.step = 0 // an add
      cold.push(await commit(pid, url, e))
      e.step = 0
      hot.push(await commit(pid, url, e))
    }
    out.push(`| ${w} | ${f1(median(cold))} | ${f1(median(hot))} |`)
  }

  if (!phases.has('api')) {
    process.stdout.write(out.join('\n') + '\n')
    process.exit(0)
  }
  out.push('', '### Schema-history admin API (the history table above)', '')
  const path0 = '/admin/v1/namespaces/scale/tables/history/schemas'
  const first: number[] = []
  let firstBytes = 0
  for (let r = 0; r < 3; r++) {
    const res = await measured(pid, url, 'GET', path0)
    if (res.status !== 200) throw new Error(`history API answered ${res.status}: ${res.body.toString().slice(0, 300)}`)
    first.push(res.ms)
    firstBytes = res.body.length
  }
  let pages = 0
  let allMs = 0
  let allBytes = 0
  let token: string | undefined = ''
  while (token !== undefined && pages < 1000) {
    const res = await measured(pid, url, 'GET', token === '' ? path0 : `${path0}?pageToken=${encodeURIComponent(token)}`)
    pages++
    allMs += res.ms
    allBytes += res.body.length
    token = (JSON.parse(res.body.toString()) as { 'next-page-token'?: string })['next-page-token']
  }
  out.push(`First answer: ${f1(median(first))} ms CPU, ${f1(firstBytes / 1024 / 1024)} MB. Whole history: ${pages} answer(s), ${f1(allMs)} ms CPU, ${f1(allBytes / 1024 / 1024)} MB.`)
  out.push('', `RSS at the end: ${JSON.stringify(rss(pid))}`)
  process.stdout.write(out.join('\n') + '\n')
} finally {
  stop()
}
