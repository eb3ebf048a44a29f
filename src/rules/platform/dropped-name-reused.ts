import { Type } from '@sinclair/typebox'
import { indexSchema } from '../../iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../iceberg/types.js'
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
    const named = [
      ...changesOf(ctx.changes, 'field-added').map(c => ({ id: c.fieldId, path: c.path, how: 'new column' })),
      ...changesOf(ctx.changes, 'field-renamed').map(c => ({ id: c.fieldId, path: c.path, how: 'renamed column' }))
    ]
    if (named.length === 0) return
    const caseSensitive = booleanOption(ctx.options, 'caseSensitive', false)
    const proposed = indexSchema(ctx.proposedSchema)
    const history = droppedNames(ctx.base, ctx.baseSchema, caseSensitive)
    // Dropped in this very commit: DROP_THEN_ADD_SAME_NAME's case, not reported twice.
    const droppedNow = new Set(changesOf(ctx.changes, 'field-dropped').map(c => nameKey(c.path, caseSensitive)))
    for (const n of named) {
      const key = nameKey(n.path, caseSensitive)
      if (droppedNow.has(key)) continue
      // The first column of that name, in history order, that the commit does not bring back.
      const old = history.get(key)?.find(o => proposed.positionOf(o.id) < 0)
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
 * Per base, current schema and case rule: name → the columns of that name, in schema-history
 * order, whose ids the current schema no longer has (each id once, where it first appears). It
 * depends on the base alone, so it is built once per base object: the ETag cache hands the same
 * parsed metadata to every commit it answers, and parsed metadata is never mutated (applying a
 * commit copies what it changes).
 */
const historyCache = new WeakMap<TableMetadata, { readonly current: Schema, readonly byCase: Map<boolean, ReadonlyMap<string, readonly OldColumn[]>> }>()

function droppedNames (base: TableMetadata, currentSchema: Schema, caseSensitive: boolean): ReadonlyMap<string, readonly OldColumn[]> {
  let hit = historyCache.get(base)
  if (hit === undefined || hit.current !== currentSchema) {
    hit = { current: currentSchema, byCase: new Map() }
    historyCache.set(base, hit)
  }
  const known = hit.byCase.get(caseSensitive)
  if (known !== undefined) return known
  const current = indexSchema(currentSchema)
  const names = new Map<string, OldColumn[]>()
  for (const schema of base.schemas) {
    const index = indexSchema(schema)
    for (let pos = 0; pos < index.size; pos++) {
      const id = index.idAt(pos)
      if (current.positionOf(id) >= 0) continue
      const key = nameKey(index.pathAt(pos), caseSensitive)
      const list = names.get(key)
      if (list === undefined) names.set(key, [{ id, schemaId: schema.schemaId }])
      else if (!list.some(o => o.id === id)) list.push({ id, schemaId: schema.schemaId })
    }
  }
  hit.byCase.set(caseSensitive, names)
  return names
}
