import { scenario } from './engine.ts'
import { parseTableMetadata } from '../src/iceberg/parse.js'
import { applyUpdates } from '../src/iceberg/apply-commit.js'
import { diffSchemas } from '../src/diff/schema-diff.js'
import { runRules } from '../src/rules/run-rules.js'
import { ALL_RULES } from '../src/rules/index.js'
import { SPEC_ONLY_SETTINGS } from '../src/rules/settings.js'
import { performance } from 'node:perf_hooks'
for (const size of [1000, 10000, 100000]) {
  const { baseJson, request } = scenario(size)
  const runs = size >= 100000 ? 5 : 30
  const best: Record<string, number> = {}
  for (let r = 0; r < runs; r++) {
    const base = parseTableMetadata(baseJson).metadata!
    let t = performance.now()
    const mark = (k: string) => { const n = performance.now(); best[k] = Math.min(best[k] ?? Infinity, n - t); t = n }
    const applied = applyUpdates(base, request.updates)
    mark('apply')
    const bs = base.schemas[0]!; const ps = applied.proposed.schemas.find(s => s.schemaId === applied.proposed.currentSchemaId)!
    const changes = diffSchemas(bs, ps)
    mark('diff')
    const ctx: any = { flow: 'update', base, proposed: applied.proposed, baseSchema: bs, proposedSchema: ps, changes, addedSchemas: applied.addedSchemas, issues: [] }
    for (const rule of ALL_RULES) { runRules([rule], ctx, SPEC_ONLY_SETTINGS); mark(rule.id) }
  }
  console.log(size, Object.entries(best).filter(([, v]) => v > 0.02 * size / 1000).map(([k, v]) => `${k}=${(v * 1000 / size).toFixed(2)}µs/f`).join(' '))
}
