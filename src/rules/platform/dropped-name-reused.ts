import { Type } from '@sinclair/typebox'
import { indexSchema } from '../../iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../iceberg/types.js'
import type { PlatformRule } from './platform-rule.js'
import { sameObjects } from '../spec/helpers.js'
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
 * Per schema history, current schema and case rule: name → the columns of that name, in
 * schema-history order, whose ids the current schema no longer has (each id once, where it first
 * appears). It depends only on the list of schemas and on the current one, so it is remembered per
 * current Schema object together with the list it was built from, and reused while `base.schemas`
 * holds the very same objects in the same order: a new base object (a data commit's new ETag)
 * keeps the parsed Schema objects whose text did not change. Parsed schemas are never mutated.
 */
const historyCache = new WeakMap<Schema, { readonly schemas: readonly Schema[], readonly byCase: Map<boolean, ReadonlyMap<string, readonly OldColumn[]>> }>()

/** Dropped columns of `base`'s history by name key. Exported for tests. */
export function droppedNames (base: TableMetadata, currentSchema: Schema, caseSensitive: boolean): ReadonlyMap<string, readonly OldColumn[]> {
  let hit = historyCache.get(currentSchema)
  if (hit === undefined || !sameObjects(hit.schemas, base.schemas)) {
    // A copy: the caller's list is read-only to us, but nothing promises it stays as it is.
    hit = { schemas: base.schemas.slice(), byCase: new Map() }
    historyCache.set(currentSchema, hit)
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
