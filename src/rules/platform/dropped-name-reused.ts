import { Type } from '@sinclair/typebox'
import { indexSchema } from '../../iceberg/schema-index.js'
import type { PlatformRule } from './platform-rule.js'
import { booleanOption, changesOf, nameKey, nameReuseExplanation } from './support.js'

/**
 * A new column (or a rename) takes a name that a dropped column once had, found in the table's
 * schema history: the same trap as DROP_THEN_ADD_SAME_NAME spread over two commits. Buf's answer is
 * FIELD_NO_DELETE_UNLESS_NAME_RESERVED; Iceberg keeps every old schema in the metadata, so the
 * history is the reservation list.
 */
export const DROPPED_NAME_REUSED: PlatformRule = {
  id: 'DROPPED_NAME_REUSED',
  category: 'platform',
  purpose: 'Warns when a new or renamed column takes the name of a column dropped earlier (schema history): it is a new, empty column, not the old one.',
  defaultSeverity: 'warn',
  optionsSchema: Type.Object({
    caseSensitive: Type.Boolean({ description: 'Compare names case-sensitively. Default false.' })
  }),
  * check (ctx) {
    if (ctx.base === undefined || ctx.baseSchema === undefined) return
    const caseSensitive = booleanOption(ctx.options, 'caseSensitive', false)
    const proposed = indexSchema(ctx.proposedSchema)
    const current = indexSchema(ctx.baseSchema)
    // Dropped in this very commit: DROP_THEN_ADD_SAME_NAME's case, not reported twice.
    const droppedNow = new Set(changesOf(ctx.changes, 'field-dropped').map(c => nameKey(c.path, caseSensitive)))
    // name → [old id, schema id] for columns that existed in some schema and are gone now.
    const history = new Map<string, { id: number, schemaId: number | undefined }>()
    for (const schema of ctx.base.schemas) {
      const index = indexSchema(schema)
      for (let pos = 0; pos < index.size; pos++) {
        const id = index.idAt(pos)
        if (proposed.positionOf(id) >= 0 || current.positionOf(id) >= 0) continue
        const key = nameKey(index.pathAt(pos), caseSensitive)
        if (!history.has(key)) history.set(key, { id, schemaId: schema.schemaId })
      }
    }
    if (history.size === 0) return
    const named = [
      ...changesOf(ctx.changes, 'field-added').map(c => ({ id: c.fieldId, path: c.path, how: 'new column' })),
      ...changesOf(ctx.changes, 'field-renamed').map(c => ({ id: c.fieldId, path: c.path, how: 'renamed column' }))
    ]
    for (const n of named) {
      const key = nameKey(n.path, caseSensitive)
      if (droppedNow.has(key)) continue
      const old = history.get(key)
      if (old === undefined || old.id === n.id) continue
      yield {
        rule: this.id,
        message: `Cannot reuse the name ${n.path} for the ${n.how} (id ${n.id}): a column ${n.path} (id ${old.id}) was dropped earlier (schema ${old.schemaId ?? '?'}); the new column is empty for all old data, this is not the old column`,
        fieldId: n.id,
        path: n.path,
        explanation: nameReuseExplanation(n.path, n.id, old.id)
      }
    }
  }
}
