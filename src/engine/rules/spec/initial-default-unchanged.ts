import { showValue } from '../../../iceberg/json-values.js'
import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, subject } from './helpers.js'

/**
 * `initial-default` is fixed when the field is added: spec "Schema Evolution": "The initial-default
 * must be set when a field is added and cannot change". It is the value every row written before
 * the field existed reads; changing it rewrites history. `write-default` may change.
 */
export const initialDefaultUnchanged: Rule = {
  id: 'INITIAL_DEFAULT_UNCHANGED',
  category: 'spec',
  purpose: "A field's initial-default never changes after the field is added.",
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const c of ctx.changes) {
      if (c.kind !== 'default-changed' || c.which !== 'initial-default') continue
      out.push({
        rule: 'INITIAL_DEFAULT_UNCHANGED',
        message: `Cannot change initial-default: ${subject(c.path, c.fieldId)}: ${showValue(c.from)} -> ${showValue(c.to)}`,
        fieldId: c.fieldId,
        path: c.path,
        explanation: 'Change write-default instead; it applies to rows written from now on.'
      })
    }
    return out
  }
}
