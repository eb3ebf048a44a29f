/**
 * `node --import tsx bench/catalog-commits.ts`: what one schema commit costs the embedded catalog
 * as its table's history grows, and what the catalog holds in memory.
 *
 * The catalog runs in a child process (`--memory` mode, as `iceguard --memory` runs it, with
 * `--expose-gc`); one table of --columns (200) columns gets --commits (500) schema commits in turn:
 * add a column (named as a dropped one was, so names are reused), rename one, drop one, each as
 * Java sends it (assert-current-schema-id, assert-last-assigned-field-id, add-schema,
 * set-current-schema -1). The CPU of a commit is the child's alone: the run time of all its
 * threads (`/proc/<pid>/task/<tid>/schedstat`, ns) around the request. Reported: median CPU of the
 * --window (9) commits ending at each checkpoint, the metadata size there, and the child's heap
 * after a full GC and its RSS.
 *
 *   --columns 200  --commits 500  --checkpoints 1,10,100,250,500  --window 9
 * Only 127.0.0.1 is contacted. Linux only (schedstat).
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { startEmbeddedCatalog } from '../src/dev-catalog/index.js'

if (process.argv[2] === 'serve') {
  // The child: the catalog, and on `gc` from the parent, a full GC and its memory on stdout.
  const served = await startEmbeddedCatalog({ memory: true })
  process.stdout.write(`${served.url}\n`)
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', () => {
    (globalThis as { gc?: () => void }).gc?.()
    const mem = process.memoryUsage()
    process.stdout.write(`${JSON.stringify({ heap: mem.heapUsed, external: mem.external, rss: mem.rss })}\n`)
  })
  process.stdin.on('end', () => { void served.close().then(() => process.exit(0)) })
  await new Promise(() => {})
}

const { values: args } = parseArgs({
  options: {
    columns: { type: 'string', default: '200' },
    commits: { type: 'string', default: '500' },
    checkpoints: { type: 'string', default: '1,10,100,250,500' },
    window: { type: 'string', default: '9' }
  }
})
const columns = Number(args.columns)
const commits = Number(args.commits)
const window = Math.max(1, Number(args.window))
const checkpoints = new Set(String(args.checkpoints).split(',').map(Number).filter(k => k > 0 && k <= commits))

interface Field { id: number, name: string, required: boolean, type: string }

const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), 'serve'], { stdio: ['pipe', 'pipe', 'inherit'] })
const lines: string[] = []
let waiting: ((line: string) => void) | undefined
let buffered = ''
child.stdout.setEncoding('utf8')
child.stdout.on('data', (text: string) => {
  buffered += text
  let nl: number
  while ((nl = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, nl)
    buffered = buffered.slice(nl + 1)
    if (waiting !== undefined) { const w = waiting; waiting = undefined; w(line) } else lines.push(line)
  }
})
const nextLine = async (): Promise<string> => lines.shift() ?? await new Promise<string>(resolve => { waiting = resolve })
const catalog = { url: await nextLine() }
const table = `${catalog.url}/v1/namespaces/bench/tables/wide`

/** Run time of every thread of the child, in ns. */
function childCpu (): number {
  let ns = 0
  for (const tid of readdirSync(`/proc/${child.pid as number}/task`)) {
    ns += Number(readFileSync(`/proc/${child.pid as number}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
  }
  return ns
}

async function call (method: 'GET' | 'POST', url: string, body?: string): Promise<{ status: number, text: string }> {
  const res = await request(url, { method, body, headers: { 'content-type': 'application/json' } })
  return { status: res.statusCode, text: await res.body.text() }
}

/** A commit: an answer other than 200 is read; a 200 is consumed without decoding (the client's work stays small). */
async function commit (url: string, body: string): Promise<{ status: number, text: string }> {
  const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
  if (res.statusCode !== 200) return { status: res.statusCode, text: await res.body.text() }
  for await (const chunk of res.body) void chunk
  return { status: 200, text: '' }
}

let fields: Field[] = Array.from({ length: columns }, (_, i) => ({ id: i + 1, name: `c${i + 1}`, required: false, type: i % 4 === 0 ? 'long' : i % 4 === 1 ? 'string' : i % 4 === 2 ? 'decimal(12, 2)' : 'timestamptz' }))
let lastColumnId = columns
let schemaId = 0
const dropped: string[] = []

await call('POST', `${catalog.url}/v1/namespaces`, JSON.stringify({ namespace: ['bench'] }))
const created = await call('POST', `${catalog.url}/v1/namespaces/bench/tables`, JSON.stringify({ name: 'wide', schema: { type: 'struct', fields } }))
if (created.status !== 200) throw new Error(`create failed: ${created.status} ${created.text}`)

/** The next schema of the history: add (reusing a dropped name), rename, drop, in turn. */
function evolve (k: number): Field[] {
  const next = fields.map(f => ({ ...f }))
  if (k % 3 === 1) {
    next.push({ id: ++lastColumnId, name: dropped.shift() ?? `n${k}`, required: false, type: 'string' })
  } else if (k % 3 === 2) {
    const f = next[(k * 7) % next.length] as Field
    f.name = `${f.name}_r`
  } else {
    const [gone] = next.splice((k * 13) % next.length, 1)
    if (gone !== undefined) dropped.push(gone.name)
  }
  return next
}

const samples: number[] = []
const rows: string[] = []
const started = childCpu()
for (let k = 1; k <= commits; k++) {
  const next = evolve(k)
  const body = JSON.stringify({
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': schemaId }, { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastColumnId - (k % 3 === 1 ? 1 : 0) }],
    updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': schemaId + 1, fields: next } }, { action: 'set-current-schema', 'schema-id': -1 }]
  })
  const before = childCpu()
  const res = await commit(table, body)
  const used = childCpu() - before
  if (res.status !== 200) throw new Error(`commit ${k} failed: ${res.status} ${res.text.slice(0, 300)}`)
  fields = next
  schemaId++
  samples.push(used / 1e6)
  if (checkpoints.has(k)) {
    const recent = samples.slice(-window).sort((a, b) => a - b)
    const median = recent[Math.floor(recent.length / 2)] as number
    const load = await call('GET', table)
    const metadataBytes = Buffer.byteLength(JSON.stringify(JSON.parse(load.text).metadata))
    child.stdin.write('gc\n')
    const mem = JSON.parse(await nextLine()) as { heap: number, external: number, rss: number }
    rows.push(`| ${k} | ${median.toFixed(2)} | ${(metadataBytes / 1e6).toFixed(2)} | ${(mem.heap / 1e6).toFixed(0)} | ${(mem.external / 1e6).toFixed(0)} | ${(mem.rss / 1e6).toFixed(0)} |`)
  }
}
const total = childCpu() - started
child.stdin.end()

console.log(`embedded catalog, --memory, ${columns} columns, ${commits} schema commits (add / rename / drop)`)
console.log('')
console.log('| commit k | catalog CPU ms (median of window) | metadata MB | heap MB | external MB | RSS MB |')
console.log('|---:|---:|---:|---:|---:|---:|')
for (const row of rows) console.log(row)
console.log('')
console.log(`catalog CPU in all ${((total) / 1e9).toFixed(1)} s`)
