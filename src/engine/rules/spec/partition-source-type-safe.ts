import { typeToString } from '../../../iceberg/print.js'
import type { PrimitiveType } from '../../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, subject, transformName } from './helpers.js'

/** Transforms whose result on a date equals their result on the promoted timestamp. */
const DATE_STABLE = new Set(['year', 'month', 'day', 'void'])

/**
 * A promotion must not change what a partition transform produces. Spec "Schema Evolution": "Type
 * promotion is not allowed for a field that is referenced by source-id or source-ids of a partition
 * field if the partition transform would produce a different value after promoting the type", e.g.
 * date → timestamp under identity or bucket. Every partition spec is checked, not only the default:
 * old specs still describe the partition values of old data files.
 */
export const partitionSourceTypeSafe: Rule = {
  id: 'PARTITION_SOURCE_TYPE_SAFE',
  category: 'spec',
  purpose: 'A type promotion never changes the result of a partition transform that uses the column.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const c of ctx.changes) {
      if (c.kind !== 'type-changed') continue
      const from = c.from as PrimitiveType
      const to = c.to as PrimitiveType
      // int→long, float→double and decimal widening keep every transform's result by design.
      if (!(from.kind === 'date' && (to.kind === 'timestamp' || to.kind === 'timestamp_ns'))) continue
      for (const spec of ctx.proposed.partitionSpecs) {
        for (const pf of spec.fields) {
          if (!pf.sourceIds.includes(c.fieldId) || DATE_STABLE.has(transformName(pf.transform))) continue
          out.push({
            rule: 'PARTITION_SOURCE_TYPE_SAFE',
            message: `Cannot change partition source type: ${subject(c.path, c.fieldId)}: ${typeToString(from)} -> ${typeToString(to)} changes the result of ${pf.transform} in partition field ${pf.name} (spec ${spec.specId})`,
            fieldId: c.fieldId,
            path: c.path,
            oldType: typeToString(from),
            newType: typeToString(to),
            explanation: 'Add a new timestamp column instead, or partition by day/month/year, which give the same value for a date and its timestamp.'
          })
        }
      }
    }
    return out
  }
}
