import { indexSchema, type IndexedField } from '../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, EXISTING_TABLE_FLOWS, schemaLabel, subject } from './helpers.js'

/**
 * A dropped field id never comes back. Old data files still hold values under that id, so a new
 * column that reuses it would suddenly "contain" the old column's data.
 *
 * Reverts (set-current-schema to an older schema) resurrect the ids of that schema on purpose.
 * Spec "Schema Evolution": "Field deletion cannot be rolled back unless the field was nullable".
 * So a revert may bring back an optional field, never a required one: rows written while it was
 * gone have no value for it.
 */
export const fieldIdNotReused: Rule = {
  id: 'FIELD_ID_NOT_REUSED',
  category: 'spec',
  purpose: 'A dropped field id never returns (a revert may restore an optional field only).',
  defaultSeverity: 'error',
  flows: EXISTING_TABLE_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    if (ctx.base === undefined || ctx.baseSchema === undefined) return out
    const current = indexSchema(ctx.baseSchema)
    // Where each historical id lived, for the message: first schema that has it.
    const history = new Map<number, { path: string, schemaId?: number }>()
    for (const s of ctx.base.schemas) {
      if (s.schemaId === ctx.baseSchema.schemaId) continue
      for (const f of indexSchema(s).fields) {
        if (!current.byId.has(f.id) && !history.has(f.id)) history.set(f.id, { path: f.path, ...(s.schemaId === undefined ? {} : { schemaId: s.schemaId }) })
      }
    }
    if (history.size === 0) return out
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      const isRevertTarget = ctx.flow === 'revert' && schema === ctx.proposedSchema
      for (const f of index.fields) {
        const was = history.get(f.id)
        if (was === undefined) continue
        if (isRevertTarget) {
          // Only the top-most restored field matters; its children come back with it.
          if (!isTopMostRestored(f, index.byId, history) || !f.required) continue
          out.push({
            rule: 'FIELD_ID_NOT_REUSED',
            message: `Cannot restore dropped field: ${subject(f.path, f.id)}: it is required, and rows written since it was dropped have no value for it`,
            fieldId: f.id,
            path: f.path,
            explanation: 'A revert may bring back only optional fields. Make the field optional in a new schema instead.'
          })
          continue
        }
        out.push({
          rule: 'FIELD_ID_NOT_REUSED',
          message: `Cannot reuse field id: ${subject(f.path, f.id)}${schemaLabel(schema, ctx)}: id ${f.id} belonged to dropped field ${was.path}${was.schemaId === undefined ? '' : ` in schema ${was.schemaId}`}`,
          fieldId: f.id,
          path: f.path,
          explanation: `Old data files still hold values under id ${f.id}. Give the new field a fresh id above last-column-id ${ctx.base.lastColumnId}.`
        })
      }
    }
    return out
  }
}

function isTopMostRestored (f: IndexedField, byId: ReadonlyMap<number, IndexedField>, history: ReadonlyMap<number, unknown>): boolean {
  if (f.parentId === undefined) return true
  return byId.has(f.parentId) && !history.has(f.parentId)
}
