import { indexSchema, type IndexedField, type SchemaIndex } from '../../iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { checkedSchemas, EXISTING_TABLE_FLOWS, sameObjects, schemaLabel, subject } from './helpers.js'

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
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      const isRevertTarget = ctx.flow === 'revert' && schema === ctx.proposedSchema
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
function isTopMostRestored (f: IndexedField, byId: ReadonlyMap<number, IndexedField>, current: SchemaIndex, everyOld: ReadonlyMap<number, OldField>): boolean {
  if (f.parentId === undefined) return true
  return byId.has(f.parentId) && !(current.positionOf(f.parentId) < 0 && everyOld.has(f.parentId))
}

interface OldField { readonly path: string, readonly schemaId?: number }

/**
 * Per schema history: every id of the schemas other than the current one, with where it first
 * lived (first schema in metadata order; the path its index gives that id). It depends only on the
 * list of schemas and on which of them is current, so it is remembered per current Schema object
 * together with the list it was built from, and reused while `base.schemas` holds the very same
 * objects in the same order. Nearly every commit, data commits included, brings a new base object,
 * but the reader reuses the parsed Schema object of every schema whose text is unchanged, so the
 * same history survives a new ETag. Parsed schemas are never mutated: applying a commit copies
 * what it changes.
 */
const historyCache = new WeakMap<Schema, { readonly schemas: readonly Schema[], readonly ids: ReadonlyMap<number, OldField> }>()

/** The ids of `base`'s schemas other than `current`, where each first lived. Exported for tests. */
export function historyOf (base: TableMetadata, current: Schema): ReadonlyMap<number, OldField> {
  const hit = historyCache.get(current)
  if (hit !== undefined && sameObjects(hit.schemas, base.schemas)) return hit.ids
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
  // A copy: the caller's list is read-only to us, but nothing promises it stays as it is.
  historyCache.set(current, { schemas: base.schemas.slice(), ids })
  return ids
}
