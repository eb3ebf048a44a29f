import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, subject } from './helpers.js'

/**
 * An identifier field is not dropped while it is still an identifier. Java's SchemaUpdate refuses
 * it ("Cannot delete identifier field ... also call setIdentifierFields"); the reference server
 * does not check, and the resulting schema names a row key that no longer exists. Dropping it
 * together with removing it from identifier-field-ids is a deliberate change and passes.
 */
export const identifierFieldNotDropped: Rule = {
  id: 'IDENTIFIER_FIELD_NOT_DROPPED',
  category: 'spec',
  purpose: 'An identifier field is not dropped while it is still listed in identifier-field-ids.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    if (ctx.baseSchema === undefined) return out
    const before = indexSchema(ctx.baseSchema)
    const after = indexSchema(ctx.proposedSchema)
    const still = new Set(ctx.proposedSchema.identifierFieldIds)
    for (const id of ctx.baseSchema.identifierFieldIds) {
      const f = before.byId.get(id)
      if (f === undefined || after.byId.has(id) || !still.has(id)) continue
      out.push({
        rule: 'IDENTIFIER_FIELD_NOT_DROPPED',
        message: `Cannot drop identifier field: ${subject(f.path, id)}: it is still listed in identifier-field-ids`,
        fieldId: id,
        path: f.path,
        explanation: 'Remove the field from identifier-field-ids in the same schema, or keep the column.'
      })
    }
    return out
  }
}
