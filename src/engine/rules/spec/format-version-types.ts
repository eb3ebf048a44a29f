import { showValue } from '../../../iceberg/json-values.js'
import { typeToString } from '../../../iceberg/print.js'
import { V3_ONLY_TYPES } from '../../../iceberg/promotion.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, isNullDefault, schemaFacts, schemaLabel, subject, TABLE_FLOWS } from './helpers.js'

/**
 * No v3-only type (timestamp_ns, timestamptz_ns, unknown, variant, geometry, geography) and no
 * non-null `initial-default` on a v1 or v2 table (spec Appendix E; Java `Schema.checkCompatibility`).
 * A `write-default` is allowed on every version: Appendix E calls it "a forward-compatible change
 * because it is only used at write time", and Java agrees (`TestSchema#testSupportedWriteDefault`).
 * The Java fixture throws an IllegalStateException for the rest and answers 500, which clients read
 * as "commit state unknown", so the proxy answers a clean 400 first.
 */
export const formatVersionTypes: Rule = {
  id: 'FORMAT_VERSION_TYPES',
  category: 'spec',
  purpose: 'v3-only types and non-null initial defaults appear only on format version 3 tables.',
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    const v = ctx.proposed.formatVersion
    if (v >= 3) return out
    for (const schema of checkedSchemas(ctx)) {
      const facts = schemaFacts(schema)
      if (!facts.v3Types && !facts.defaults) continue
      const where = schemaLabel(schema, ctx)
      for (const f of indexSchema(schema).fields) {
        const t = f.type
        if (t.kind !== 'struct' && t.kind !== 'list' && t.kind !== 'map' && V3_ONLY_TYPES.has(t.kind)) {
          out.push({
            rule: 'FORMAT_VERSION_TYPES',
            message: `Cannot use type on a v${v} table: ${subject(f.path, f.id)}${where}: ${typeToString(t)} needs format version 3`,
            fieldId: f.id,
            path: f.path,
            newType: typeToString(t),
            explanation: 'Upgrade the table to format version 3 (upgrade-format-version) or pick a v1/v2 type.'
          })
        }
        const d = f.field
        if (d === undefined || isNullDefault(d.initialDefault)) continue
        out.push({
          rule: 'FORMAT_VERSION_TYPES',
          message: `Cannot set initial default on a v${v} table: ${subject(f.path, f.id)}${where}: initial-default ${showValue(d.initialDefault)} needs format version 3`,
          fieldId: f.id,
          path: f.path,
          explanation: 'Older readers fill the column with null, not the initial default: remove it (a write-default alone is fine), or upgrade the table to format version 3.'
        })
      }
    }
    return out
  }
}
