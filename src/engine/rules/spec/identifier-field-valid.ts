import { typeToString } from '../../../iceberg/print.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { ancestors, checkedSchemas, schemaLabel, subject, TABLE_FLOWS } from './helpers.js'

/**
 * Identifier fields (the row key engines use for upserts and equality deletes) must exist, be
 * required primitives that are not float or double, and sit only inside required structs: spec
 * "Identifier Field IDs" ("cannot be nested within maps or lists ... nor in an optional struct").
 * An identifier dropped from the schema while still listed is IDENTIFIER_FIELD_NOT_DROPPED's.
 */
export const identifierFieldValid: Rule = {
  id: 'IDENTIFIER_FIELD_VALID',
  category: 'spec',
  purpose: 'Identifier fields exist and are required primitives (not float/double), outside lists, maps and optional structs.',
  defaultSeverity: 'error',
  flows: TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    const before = ctx.baseSchema === undefined ? undefined : indexSchema(ctx.baseSchema)
    const wasIdentifier = new Set(ctx.baseSchema?.identifierFieldIds ?? [])
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      const where = schemaLabel(schema, ctx)
      for (const id of new Set(schema.identifierFieldIds)) {
        const f = index.byId.get(id)
        if (f === undefined) {
          if (schema === ctx.proposedSchema && wasIdentifier.has(id) && before?.byId.has(id) === true) continue
          out.push({ rule: 'IDENTIFIER_FIELD_VALID', message: `Cannot use identifier field: id ${id}${where}: not found in the schema`, fieldId: id })
          continue
        }
        const problems: string[] = []
        const t = f.type
        if (t.kind === 'struct' || t.kind === 'list' || t.kind === 'map' || t.kind === 'variant') problems.push(`not a primitive (${typeToString(t)})`)
        else if (t.kind === 'float' || t.kind === 'double') problems.push(`must not be a ${t.kind} field`)
        if (!f.required) problems.push('not a required field')
        for (const a of ancestors(index, f)) {
          if (a.type.kind === 'list' || a.type.kind === 'map') problems.push(`must not be nested in ${a.type.kind} ${a.path}`)
          else if (!a.required) problems.push(`must not be nested in an optional field ${a.path}`)
        }
        for (const p of problems) {
          out.push({
            rule: 'IDENTIFIER_FIELD_VALID',
            message: `Cannot use identifier field: ${subject(f.path, f.id)}${where}: ${p}`,
            fieldId: f.id,
            path: f.path,
            explanation: 'Identifier fields must be required primitive columns (not float/double) reachable through required structs only.'
          })
        }
      }
    }
    return out
  }
}
