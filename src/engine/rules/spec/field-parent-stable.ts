import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, subject } from './helpers.js'

/**
 * A field stays in its struct. Spec "Schema Evolution": "Grouping a subset of a struct's fields into
 * a nested struct is not allowed, nor is moving fields from a nested struct into its immediate
 * parent struct". Readers resolve columns by id inside their parent, so a moved id reads nothing.
 */
export const fieldParentStable: Rule = {
  id: 'FIELD_PARENT_STABLE',
  category: 'spec',
  purpose: 'A field is never moved to another struct.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const c of ctx.changes) {
      if (c.kind !== 'field-moved') continue
      out.push({
        rule: 'FIELD_PARENT_STABLE',
        message: `Cannot move field to another struct: ${subject(c.oldPath, c.fieldId)} -> ${c.path}`,
        fieldId: c.fieldId,
        path: c.path,
        explanation: 'Add a new field in the target struct (new id) and backfill it; fields may only be reordered within their struct.'
      })
    }
    return out
  }
}
