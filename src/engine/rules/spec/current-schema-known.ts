import type { Rule, Violation } from '../rule.js'
import { ALL_FLOWS } from './helpers.js'

/**
 * `set-current-schema` names a schema that exists after the commit's earlier updates, and `-1`
 * follows an `add-schema` that really added one. Java: "Cannot set current schema to unknown
 * schema" and "Cannot set last added schema: no schema has been added"; an add equal to an
 * existing schema adds nothing, so `-1` after it fails there too.
 */
export const currentSchemaKnown: Rule = {
  id: 'CURRENT_SCHEMA_KNOWN',
  category: 'spec',
  purpose: 'set-current-schema names a schema that exists (-1 only right after an add-schema that adds one).',
  defaultSeverity: 'error',
  flows: ALL_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const issue of ctx.issues ?? []) {
      if (issue.rule === 'CURRENT_SCHEMA_KNOWN') out.push({ rule: 'CURRENT_SCHEMA_KNOWN', message: `${issue.message} (at ${issue.at})` })
    }
    return out
  }
}
