import { indexSchema, type IndexedField } from '../../iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../iceberg/types.js'
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
    const everyOld = historyOf(ctx.base, ctx.baseSchema)
    if (everyOld.size === 0) return out
    // Only ids the current schema lacks can be reused ones; ids it still has are never looked up.
    const history = {
      get: (id: number) => current.positionOf(id) < 0 ? everyOld.get(id) : undefined,
      has: (id: number) => current.positionOf(id) < 0 && everyOld.has(id)
    }
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      const isRevertTarget = ctx.flow === 'revert' && schema === ctx.proposedSchema
      for (let pos = 0; pos < index.size; pos++) {
        const was = history.get(index.idAt(pos))
        if (was === undefined) continue
        const f = index.at(pos)
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

function isTopMostRestored (f: IndexedField, byId: ReadonlyMap<number, IndexedField>, history: { has: (id: number) => boolean }): boolean {
  if (f.parentId === undefined) return true
  return byId.has(f.parentId) && !history.has(f.parentId)
}

interface OldField { readonly path: string, readonly schemaId?: number }

/**
 * Per base: every id of the schemas other than the current one, with where it first lived (first
 * schema in metadata order; the path its index gives that id). It depends on the base alone, and a
 * base read from the upstream is reused by every commit the ETag cache answers with it, so it is
 * built once per base object. That is sound because table metadata is never mutated once parsed:
 * the parser builds it, the ETag cache hands out the same object, and applying a commit copies
 * what it changes (`applyUpdates` builds new lists). The current schema is stored beside it, so a
 * caller passing another current schema for the same base gets a fresh answer.
 */
const historyCache = new WeakMap<TableMetadata, { readonly current: Schema, readonly ids: ReadonlyMap<number, OldField> }>()

function historyOf (base: TableMetadata, current: Schema): ReadonlyMap<number, OldField> {
  const hit = historyCache.get(base)
  if (hit !== undefined && hit.current === current) return hit.ids
  const ids = new Map<number, OldField>()
  for (const s of base.schemas) {
    if (s.schemaId === current.schemaId) continue
    const index = indexSchema(s)
    for (let pos = 0; pos < index.size; pos++) {
      const id = index.idAt(pos)
      if (ids.has(id)) continue
      ids.set(id, { path: index.pathAt(pos), ...(s.schemaId === undefined ? {} : { schemaId: s.schemaId }) })
    }
  }
  historyCache.set(base, { current, ids })
  return ids
}
