import { indexSchema, type IndexedField, type SchemaIndex } from '../../../iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { tableHistory } from '../../../iceberg/history-store.js'
import { checkedSchemas, EXISTING_TABLE_FLOWS, schemaLabel, subject } from './helpers.js'

/**
 * A dropped field id never comes back. Old data files still hold values under that id, so a new
 * column that reuses it would suddenly "contain" the old column's data.
 *
 * Reverts (set-current-schema to an older schema) resurrect the ids of that schema on purpose.
 * Spec "Schema Evolution": "Field deletion cannot be rolled back unless the field was nullable".
 * So a revert may bring back an optional field, never a required one: rows written while it was
 * gone have no value for it. A replace that makes an older schema current again (Java sends
 * set-current-schema alone when the replacement equals it) brings back that schema's own fields,
 * and drops the main branch's rows with it: no row lacks them.
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
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      const isRevertTarget = ctx.flow === 'revert' && schema === ctx.proposedSchema
      if (ctx.flow === 'replace' && schema === ctx.proposedSchema && schema.schemaId !== undefined && ctx.base.schemas.some(s => s.schemaId === schema.schemaId)) continue
      for (let pos = 0; pos < index.size; pos++) {
        // Only ids the current schema lacks can be reused ones; ids it still has are never looked up.
        const id = index.idAt(pos)
        if (current.positionOf(id) >= 0) continue
        const was = everyOld.get(id)
        if (was === undefined) continue
        const f = index.at(pos)
        if (isRevertTarget) {
          // Only the top-most restored field matters; its children come back with it.
          if (!isTopMostRestored(f, index.byId, current, everyOld) || !f.required) continue
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

/** The parent of `f` is no restored field: it is in the schema and either current or never old. */
function isTopMostRestored (f: IndexedField, byId: ReadonlyMap<number, IndexedField>, current: SchemaIndex, everyOld: { has (id: number): boolean }): boolean {
  if (f.parentId === undefined) return true
  return byId.has(f.parentId) && !(current.positionOf(f.parentId) < 0 && everyOld.has(f.parentId))
}

interface OldField { readonly path: string, readonly schemaId?: number }

/**
 * Every id of `base`'s schemas other than `current`, with where it first lived (first schema in
 * metadata order; the path its index gives that id), from the table's history summary
 * (`history-store.ts`): a commit reads only the schemas new since the table's last one. An id
 * that only `current` has is left out, as the rule's question is about the other schemas.
 * Exported for tests.
 */
export function historyOf (base: TableMetadata, current: Schema): { get (id: number): OldField | undefined, has (id: number): boolean } {
  const history = tableHistory(base)
  const ownIndex = indexSchema(current)
  const lookup = (id: number): OldField | undefined => {
    const seen = history.firstSeen(id)
    if (seen === undefined) return undefined
    // First seen in `current` itself: an old schema may still have it later, rare enough to walk.
    if (seen.schemaId !== undefined && seen.schemaId === current.schemaId && ownIndex.positionOf(id) >= 0) return laterOwner(base, current, id)
    return seen
  }
  return { get: lookup, has: id => lookup(id) !== undefined }
}

/** Where `id` first lived among the schemas other than `current` (walked: the summary's first is `current`). */
function laterOwner (base: TableMetadata, current: Schema, id: number): OldField | undefined {
  for (const s of base.schemas) {
    if (s.schemaId === current.schemaId) continue
    const index = indexSchema(s)
    const pos = index.positionOf(id)
    if (pos >= 0) return { path: index.pathAt(pos), ...(s.schemaId === undefined ? {} : { schemaId: s.schemaId }) }
  }
  return undefined
}
