/**
 * Engine benchmark: time to evaluate one schema commit (parse the add-schema, apply, diff, run
 * every spec rule, decide) against nested schemas of 100 to 100,000 fields.
 *
 *   npx tsx bench/engine.ts
 *
 * Cost must grow linearly (ratio ≈ 10 per step) and 10,000 fields must stay well under 10 ms.
 * Each timed run gets its own freshly parsed base, so no index cached by an earlier run helps it.
 */
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { evaluateCommit } from '../src/engine/evaluate-commit.js'
import { parseTableMetadata } from '../src/iceberg/parse.js'
import { SPEC_ONLY_SETTINGS } from '../src/engine/rules/settings.js'

export interface EngineBenchRow {
  readonly fields: number
  readonly medianMs: number
  /** Fastest run: the figure least disturbed by other load on the machine. */
  readonly minMs: number
  /** minMs divided by the previous row's minMs (undefined for the first row). */
  readonly ratio?: number
  readonly verdict: string
}

interface JsonField { id: number, name: string, required: boolean, type: unknown }

/**
 * A nested schema of about `total` fields: top-level structs of 10 fields each, whose members are
 * primitives, structs, lists of structs and maps, three levels deep.
 */
function buildFields (total: number): { fields: JsonField[], lastId: number } {
  let id = 0
  const next = (): number => ++id
  const leaf = (i: number): JsonField => ({ id: next(), name: `c${i}`, required: false, type: i % 3 === 0 ? 'int' : i % 3 === 1 ? 'string' : 'decimal(10, 2)' })
  const group = (depth: number, budget: number): JsonField[] => {
    const out: JsonField[] = []
    // eslint-disable-next-line no-unmodified-loop-condition -- next() advances it
    for (let i = 0; i < 10 && id < budget; i++) {
      if (depth < 3 && i === 7) {
        const sid = next()
        out.push({ id: sid, name: `s${i}`, required: false, type: { type: 'struct', fields: group(depth + 1, budget) } })
      } else if (depth < 3 && i === 8) {
        const fid = next()
        const eid = next()
        out.push({ id: fid, name: `l${i}`, required: false, type: { type: 'list', 'element-id': eid, 'element-required': false, element: { type: 'struct', fields: group(depth + 1, budget) } } })
      } else if (i === 9) {
        const fid = next()
        const kid = next()
        const vid = next()
        out.push({ id: fid, name: `m${i}`, required: false, type: { type: 'map', 'key-id': kid, key: 'string', 'value-id': vid, 'value-required': false, value: 'long' } })
      } else {
        out.push(leaf(i))
      }
    }
    return out
  }
  const top: JsonField[] = []
  let t = 0
  // eslint-disable-next-line no-unmodified-loop-condition -- next() advances it
  while (id < total) top.push({ id: next(), name: `t${t++}`, required: false, type: { type: 'struct', fields: group(1, total) } })
  return { fields: top, lastId: id }
}

export function scenario (total: number): { baseJson: unknown, request: { requirements: unknown[], updates: unknown[] } } {
  const { fields, lastId } = buildFields(total)
  const schema = { type: 'struct', 'schema-id': 0, 'identifier-field-ids': [], fields }
  const baseJson = {
    'format-version': 2,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: 's3://bucket/wh/t',
    'last-column-id': lastId,
    'current-schema-id': 0,
    schemas: [schema],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {}
  }
  // The evolution: widen the first int, rename a column, add an optional column at the end.
  const evolved = structuredClone(fields)
  const first = evolved[0] as { type: { fields: JsonField[] } }
  const intField = first.type.fields.find(f => f.type === 'int')
  if (intField !== undefined) intField.type = 'long'
  const strField = first.type.fields.find(f => f.type === 'string')
  if (strField !== undefined) strField.name = `${strField.name}_renamed`
  evolved.push({ id: lastId + 1, name: 'added', required: false, type: 'string' })
  return {
    baseJson,
    request: {
      requirements: [
        { type: 'assert-table-uuid', uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1' },
        { type: 'assert-current-schema-id', 'current-schema-id': 0 },
        { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': lastId }
      ],
      updates: [
        { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, 'identifier-field-ids': [], fields: evolved } },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
    }
  }
}

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

/** Runs the benchmark and returns one row per schema size. */
export function engineBenchmark (sizes: readonly number[] = [100, 1_000, 10_000, 100_000]): EngineBenchRow[] {
  const rows: EngineBenchRow[] = []
  for (const size of sizes) {
    const { baseJson, request } = scenario(size)
    // Enough runs at every size for the fastest to be one no other process disturbed: a 100 ms run
    // is far likelier to be interrupted on a shared machine than a 4 ms one.
    const runs = size >= 100_000 ? 25 : size >= 10_000 ? 61 : 101
    const warmup = 3
    const times: number[] = []
    let verdict = ''
    for (let i = 0; i < runs + warmup; i++) {
      // A fresh base per run (parsed outside the timed section), as the gate loads one per commit.
      const { metadata: base, issues } = parseTableMetadata(baseJson)
      if (base === undefined) throw new Error(`bench base does not parse: ${issues[0]?.message ?? ''}`)
      const t0 = performance.now()
      const ev = evaluateCommit({ base, request, settings: SPEC_ONLY_SETTINGS })
      const ms = performance.now() - t0
      verdict = ev.verdict
      if (i >= warmup) times.push(ms)
    }
    const medianMs = median(times)
    const minMs = Math.min(...times)
    const prev = rows[rows.length - 1]
    rows.push({ fields: size, medianMs, minMs, ...(prev === undefined ? {} : { ratio: minMs / prev.minMs }), verdict })
  }
  return rows
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log('engine: evaluate one commit (parse add-schema, apply, diff, spec rules, decide)')
  console.log('fields'.padStart(8), 'min ms'.padStart(10), 'median ms'.padStart(11), 'ratio(min)'.padStart(11), 'µs/field'.padStart(9), ' verdict')
  for (const r of engineBenchmark()) {
    console.log(String(r.fields).padStart(8), r.minMs.toFixed(3).padStart(10), r.medianMs.toFixed(3).padStart(11), (r.ratio === undefined ? '-' : r.ratio.toFixed(1)).padStart(11), (1000 * r.minMs / r.fields).toFixed(3).padStart(9), ` ${r.verdict}`)
  }
}
