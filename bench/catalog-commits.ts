/**
 * `node --expose-gc --import tsx bench/catalog-commits.ts`: what one schema commit costs the
 * embedded catalog as its table's history grows, and what the catalog holds in memory.
 *
 * The catalog runs in this process (`--memory` mode, as `iceguard --memory` runs it); one table of
 * --columns (200) columns gets --commits (500) schema commits in turn: add a column (named as a
 * dropped one was, so names are reused), rename one, drop one, each as Java sends it
 * (assert-current-schema-id, assert-last-assigned-field-id, add-schema, set-current-schema -1).
 * The request body is built before the clock starts; CPU is `process.cpuUsage()` around the
 * request (the client's share is the same at every k). Reported: median CPU of the --window (9)
 * commits ending at each checkpoint, the metadata size there, and the heap after a full GC.
 *
 *   --columns 200  --commits 500  --checkpoints 1,10,100,250,500  --window 9
 * Only 127.0.0.1 is contacted.
 */
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { startEmbeddedCatalog } from '../src/catalog/index.js'

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
const gc = (globalThis as { gc?: () => void }).gc

interface Field { id: number, name: string, required: boolean, type: string }

const catalog = await startEmbeddedCatalog({ memory: true })
const table = `${catalog.url}/v1/namespaces/bench/tables/wide`

async function call (method: 'GET' | 'POST', url: string, body?: string): Promise<{ status: number, text: string }> {
  const res = await request(url, { method, body, headers: { 'content-type': 'application/json' } })
  return { status: res.statusCode, text: await res.body.text() }
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
const started = process.cpuUsage()
for (let k = 1; k <= commits; k++) {
  const next = evolve(k)
  const body = JSON.stringify({
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': schemaId }, { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastColumnId - (k % 3 === 1 ? 1 : 0) }],
    updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': schemaId + 1, fields: next } }, { action: 'set-current-schema', 'schema-id': -1 }]
  })
  const before = process.cpuUsage()
  const res = await call('POST', table, body)
  const used = process.cpuUsage(before)
  if (res.status !== 200) throw new Error(`commit ${k} failed: ${res.status} ${res.text.slice(0, 300)}`)
  fields = next
  schemaId++
  samples.push((used.user + used.system) / 1000)
  if (checkpoints.has(k)) {
    const recent = samples.slice(-window).sort((a, b) => a - b)
    const median = recent[Math.floor(recent.length / 2)] as number
    const load = await call('GET', table)
    const metadataBytes = Buffer.byteLength(JSON.stringify(JSON.parse(load.text).metadata))
    gc?.()
    const mem = process.memoryUsage()
    rows.push(`| ${k} | ${median.toFixed(2)} | ${(metadataBytes / 1e6).toFixed(2)} | ${(mem.heapUsed / 1e6).toFixed(0)} | ${(mem.external / 1e6).toFixed(0)} | ${(mem.rss / 1e6).toFixed(0)} |`)
  }
}
const total = process.cpuUsage(started)
await catalog.close()

console.log(`embedded catalog, --memory, ${columns} columns, ${commits} schema commits (add / rename / drop)${gc === undefined ? ' (run with --expose-gc for heap after GC)' : ''}`)
console.log('')
console.log('| commit k | CPU ms (median of window) | metadata MB | heap MB | external MB | RSS MB |')
console.log('|---:|---:|---:|---:|---:|---:|')
for (const row of rows) console.log(row)
console.log('')
console.log(`total CPU ${((total.user + total.system) / 1e6).toFixed(1)} s`)
