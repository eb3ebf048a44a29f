import { indexSchema } from '../../../iceberg/schema-index.js'
import type { NestedField, StructType } from '../../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { ALL_FLOWS, checkedSchemas, schemaFacts, schemaLabel } from './helpers.js'

/**
 * Names are unique within a struct, and full names (`a.b`) are unique in the schema: Java's
 * `IndexByName` refuses duplicates ("Invalid schema: multiple fields for name"), and engines resolve
 * columns by name in SQL. Case variants (`A`, `a`) are allowed, as in Java.
 */
export const fieldNameUnique: Rule = {
  id: 'FIELD_NAME_UNIQUE',
  category: 'spec',
  purpose: 'Field names are unique within a struct, and full dotted names are unique in the schema.',
  defaultSeverity: 'error',
  flows: ALL_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const schema of checkedSchemas(ctx)) {
      const index = indexSchema(schema)
      const where = schemaLabel(schema, ctx)
      // Made only when something is reported or full names can collide: nearly never.
      let reported: Set<string> | undefined
      const check = (struct: StructType): void => {
        const dup = duplicateName(struct.fields)
        if (dup === undefined) return
        const f = index.byId.get(dup.id)
        const path = f?.path ?? dup.name
        reported ??= new Set()
        reported.add(path)
        out.push({
          rule: 'FIELD_NAME_UNIQUE',
          message: `Cannot use field name twice in one struct: ${path}${where}: ids ${dup.firstId} and ${dup.id}`,
          fieldId: dup.id,
          path,
          explanation: 'Rename one of the fields.'
        })
      }
      const facts = schemaFacts(schema)
      for (const struct of facts.structs) check(struct)
      // Full names can only collide when some name itself contains a dot.
      if (!facts.dottedNames) continue
      for (const path of index.duplicatePaths) {
        reported ??= new Set()
        if (reported.has(path)) continue
        reported.add(path)
        const ids = index.fields.filter(f => f.path === path).map(f => f.id)
        out.push({
          rule: 'FIELD_NAME_UNIQUE',
          message: `Cannot use full field name twice: ${path}${where}: ids ${ids.join(' and ')} share it`,
          fieldId: ids[ids.length - 1] as number,
          path,
          explanation: 'A top-level name containing a dot collides with a nested field; rename one of them.'
        })
      }
    }
    return out
  }
}

/** The first repeated name among siblings; small structs are scanned without allocating. */
function duplicateName (fields: readonly NestedField[]): { name: string, firstId: number, id: number } | undefined {
  if (fields.length <= 16) {
    for (let i = 1; i < fields.length; i++) {
      const f = fields[i] as NestedField
      for (let j = 0; j < i; j++) {
        const g = fields[j] as NestedField
        if (g.name === f.name) return { name: f.name, firstId: g.id, id: f.id }
      }
    }
    return undefined
  }
  const seen = new Map<string, number>()
  for (const f of fields) {
    const first = seen.get(f.name)
    if (first !== undefined) return { name: f.name, firstId: first, id: f.id }
    seen.set(f.name, f.id)
  }
  return undefined
}
