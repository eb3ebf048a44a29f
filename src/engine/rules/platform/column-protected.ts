import { Type } from '@sinclair/typebox'
import { typeToString } from '../../../iceberg/print.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import { pathCovers } from '../path-glob.js'
import type { PlatformRule } from './platform-rule.js'
import { stringListOption, subtree } from './support.js'

/**
 * Columns a table's consumers cannot live without (keys, partition inputs, billing amounts): never
 * dropped, renamed, moved or retyped. Paths are globs over the base schema; protecting `address`
 * protects everything nested in it.
 */
export const COLUMN_PROTECTED: PlatformRule = {
  id: 'COLUMN_PROTECTED',
  category: 'platform',
  purpose: 'Refuses dropping, renaming, moving or retyping the columns listed in its `paths` option.',
  defaultSeverity: 'error',
  optionsSchema: Type.Object({
    paths: Type.Array(Type.String({ minLength: 1 }), { description: 'Column paths (dotted, globs allowed) that must never be dropped, renamed or retyped.' })
  }),
  * check (ctx) {
    const globs = stringListOption(ctx.options, 'paths', [])
    if (globs.length === 0 || ctx.baseSchema === undefined) return
    const base = indexSchema(ctx.baseSchema)
    const protectedBy = new Map<number, string>()
    for (let pos = 0; pos < base.size; pos++) {
      const path = base.pathAt(pos)
      const g = globs.find(glob => pathCovers(glob, path))
      if (g !== undefined && !protectedBy.has(base.idAt(pos))) protectedBy.set(base.idAt(pos), g)
    }
    if (protectedBy.size === 0) return
    for (const c of ctx.changes) {
      if (c.kind === 'identifier-fields-changed') continue
      let verb: string | undefined
      let detail = ''
      let ids: number[] = [c.fieldId]
      let oldType: string | undefined
      let newType: string | undefined
      if (c.kind === 'field-dropped') {
        verb = 'drop'
        // Dropping a parent drops the protected column inside it.
        ids = subtree(base, c.fieldId).map(f => f.id)
      } else if (c.kind === 'field-renamed') {
        verb = 'rename'
        detail = ` to ${c.newName}`
      } else if (c.kind === 'field-moved') {
        verb = 'move'
        detail = ` to ${c.path}`
      } else if (c.kind === 'type-changed' || c.kind === 'kind-changed') {
        verb = 'change the type of'
        oldType = typeToString(c.from)
        newType = typeToString(c.to)
        detail = ` from ${oldType} to ${newType}`
      }
      if (verb === undefined) continue
      const hit = ids.find(id => protectedBy.has(id))
      if (hit === undefined) continue
      const path = base.byId.get(hit)?.path ?? c.path
      const via = hit === c.fieldId ? '' : ` (dropping ${c.path} removes it)`
      yield {
        rule: this.id,
        message: `Cannot ${verb} protected column ${path} (id ${hit})${detail}${via}: the policy protects ${protectedBy.get(hit) ?? path}`,
        fieldId: hit,
        path,
        ...(oldType !== undefined && { oldType }),
        ...(newType !== undefined && { newType })
      }
    }
  }
}
