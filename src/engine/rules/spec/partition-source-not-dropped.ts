import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { basePath, defaultSpec, subject, TABLE_FLOWS, transformName } from './helpers.js'

/**
 * Every source column of the default partition spec exists in the current schema, unless the
 * partition field's transform is `void`. Java's `TableMetadata.build()` refuses otherwise ("Cannot
 * find source column for partition field"), and older versions wrote metadata no reader could load
 * (apache/iceberg#5676). Historical specs are not checked, as in Java (only the default is bound).
 */
export const partitionSourceNotDropped: Rule = {
  id: 'PARTITION_SOURCE_NOT_DROPPED',
  category: 'spec',
  purpose: 'A column the default partition spec uses (other than through void) is not dropped.',
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    const spec = defaultSpec(ctx.proposed)
    if (spec === undefined) return out
    const index = indexSchema(ctx.proposedSchema)
    for (const pf of spec.fields) {
      if (transformName(pf.transform) === 'void') continue
      for (const id of pf.sourceIds) {
        if (index.byId.has(id)) continue
        const path = basePath(ctx, id)
        out.push({
          rule: 'PARTITION_SOURCE_NOT_DROPPED',
          message: path === undefined
            ? `Cannot find source column for partition field ${pf.name}: id ${id} is not in the schema`
            : `Cannot drop partition source column: ${subject(path, id)}: partition field ${pf.name} (${pf.transform}) of default spec ${spec.specId} uses it`,
          fieldId: id,
          ...(path === undefined ? {} : { path }),
          explanation: 'First remove the partition field with a new partition spec (or replace its transform with void on a v1 table), then drop the column.'
        })
      }
    }
    return out
  }
}
