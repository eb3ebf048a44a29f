import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, subject } from './helpers.js'

/**
 * An optional field never becomes required; list elements and map values included. Existing files
 * may hold nulls, which a required column cannot return. Java allows it only with
 * `allowIncompatibleChanges()`; the spec lists it among nothing it permits (spec "Schema Evolution").
 */
export const nullabilityNotTightened: Rule = {
  id: 'NULLABILITY_NOT_TIGHTENED',
  category: 'spec',
  purpose: 'An optional field (or list element, or map value) never becomes required.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const c of ctx.changes) {
      if (c.kind !== 'nullability-changed' || c.to !== 'required') continue
      out.push({
        rule: 'NULLABILITY_NOT_TIGHTENED',
        message: `Cannot change column nullability: ${subject(c.path, c.fieldId)}: optional -> required`,
        fieldId: c.fieldId,
        path: c.path,
        explanation: 'Existing data may contain nulls. Keep the field optional and enforce non-null values in the writers.'
      })
    }
    return out
  }
}
