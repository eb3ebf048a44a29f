import { scenario } from './engine.ts'
import { parseTableMetadata } from '../src/iceberg/parse.js'
import { applyUpdates } from '../src/iceberg/apply-commit.js'
import { diffSchemas } from '../src/diff/schema-diff.js'
import { indexSchema } from '../src/iceberg/schema-index.js'
import { performance } from 'node:perf_hooks'
for (const size of [1000, 10000, 100000]) {
  const { baseJson, request } = scenario(size)
  const runs = size >= 100000 ? 5 : 30
  const best: Record<string, number> = {}
  for (let r = 0; r < runs; r++) {
    const base = parseTableMetadata(baseJson).metadata!
    const applied = applyUpdates(base, request.updates)
    const bs = base.schemas[0]!; const ps = applied.proposed.schemas.find(s => s.schemaId === applied.proposed.currentSchemaId)!
    let t = performance.now()
    const mark = (k: string) => { const n = performance.now(); best[k] = Math.min(best[k] ?? Infinity, n - t); t = n }
    indexSchema(bs); mark('idxA'); indexSchema(ps); mark('idxB')
    diffSchemas(bs, ps); mark('diff-rest')
  }
  console.log(size, Object.entries(best).map(([k, v]) => `${k}=${(v * 1000 / size).toFixed(2)}µs/f`).join(' '))
}
