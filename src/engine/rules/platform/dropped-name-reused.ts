import { Type } from '@sinclair/typebox'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../../iceberg/types.js'
import type { PlatformRule } from './platform-rule.js'
import { tableHistory } from '../../../iceberg/history-store.js'
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
    const named = [
      ...changesOf(ctx.changes, 'field-added').map(c => ({ id: c.fieldId, path: c.path, how: 'new column' })),
      ...changesOf(ctx.changes, 'field-renamed').map(c => ({ id: c.fieldId, path: c.path, how: 'renamed column' }))
    ]
    if (named.length === 0) return
    const caseSensitive = booleanOption(ctx.options, 'caseSensitive', false)
    const proposed = indexSchema(ctx.proposedSchema)
    // Dropped in this very commit: DROP_THEN_ADD_SAME_NAME's case, not reported twice.
    const droppedNow = new Set(changesOf(ctx.changes, 'field-dropped').map(c => nameKey(c.path, caseSensitive)))
    for (const n of named) {
      const key = nameKey(n.path, caseSensitive)
      if (droppedNow.has(key)) continue
      // The first column of that name, in history order, that the commit does not bring back.
      const old = droppedNamed(ctx.base, ctx.baseSchema, key, caseSensitive).find(o => proposed.positionOf(o.id) < 0)
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

interface OldColumn { readonly id: number, readonly schemaId: number | undefined }

/**
 * The columns of `base`'s history named `key` whose ids the current schema no longer has, in
 * schema-history order (each id once, where it first carried the name), from the table's history
 * summary (`history-store.ts`): a commit reads only the schemas new since the table's last one.
 * Exported for tests.
 */
export function droppedNamed (base: TableMetadata, currentSchema: Schema, key: string, caseSensitive: boolean): readonly OldColumn[] {
  const current = indexSchema(currentSchema)
  return tableHistory(base).named(key, caseSensitive).filter(o => current.positionOf(o.id) < 0)
}
