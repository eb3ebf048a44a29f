import { indexSchema, type IndexedField } from '../../iceberg/schema-index.js'
import type { IcebergType, NestedField } from '../../iceberg/types.js'
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
    // Only ids the commit uses and the current schema lacks can be reused ones: usually a few new
    // columns. Older schemas are searched for those alone, by a walk that allocates nothing, so
    // a table with a long history costs no index of every old schema on each commit.
    const candidates = new Set<number>()
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      for (let pos = 0; pos < index.size; pos++) {
        const id = index.idAt(pos)
        if (current.positionOf(id) < 0) candidates.add(id)
      }
    }
    if (candidates.size === 0) return out
    // Where each historical id lived, for the message: first schema that has it.
    const history = new Map<number, { path: string, schemaId?: number }>()
    for (const s of ctx.base.schemas) {
      if (s.schemaId === ctx.baseSchema.schemaId) continue
      const found = idsIn(s.struct, candidates, history)
      if (found.length === 0) continue
      const byId = indexSchema(s).byId
      for (const id of found) history.set(id, { path: (byId.get(id) as IndexedField).path, ...(s.schemaId === undefined ? {} : { schemaId: s.schemaId }) })
    }
    if (history.size === 0) return out
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

function isTopMostRestored (f: IndexedField, byId: ReadonlyMap<number, IndexedField>, history: ReadonlyMap<number, unknown>): boolean {
  if (f.parentId === undefined) return true
  return byId.has(f.parentId) && !history.has(f.parentId)
}

/** Ids of `wanted` that occur in the type tree and are not yet in `known`, each once. */
function idsIn (root: IcebergType, wanted: ReadonlySet<number>, known: ReadonlyMap<number, unknown>): number[] {
  const found: number[] = []
  const seen = new Set<number>()
  const note = (id: number): void => {
    if (wanted.has(id) && !known.has(id) && !seen.has(id)) { seen.add(id); found.push(id) }
  }
  const stack: IcebergType[] = [root]
  while (stack.length > 0) {
    const t = stack.pop() as IcebergType
    switch (t.kind) {
      case 'struct':
        for (let i = 0; i < t.fields.length; i++) {
          const f = t.fields[i] as NestedField
          note(f.id)
          stack.push(f.type)
        }
        break
      case 'list':
        note(t.elementId)
        stack.push(t.element)
        break
      case 'map':
        note(t.keyId)
        note(t.valueId)
        stack.push(t.key, t.value)
        break
      default:
    }
  }
  return found
}
