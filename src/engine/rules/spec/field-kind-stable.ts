import { typeToString } from '../../../iceberg/print.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, mapKeyTest, subject } from './helpers.js'

/**
 * A field id keeps its kind: primitive, struct, list or map (spec "Schema Evolution": "Evolving
 * primitive types to structs is not allowed, nor is evolving a single-field struct to a primitive").
 * A list's element and a map's value keep their ids too: a new id there would orphan every stored
 * value. v3's `unknown` is a primitive type like any other here: its promotion "to any type" is in
 * the table of *primitive* type promotions, and the sentence above rules out a primitive becoming a
 * struct, so `unknown -> struct | list | map` is refused, as Java (`UpdateSchema.updateColumn`
 * takes only a primitive type) and PyIceberg ("Cannot promote unknown to struct") refuse it.
 */
export const fieldKindStable: Rule = {
  id: 'FIELD_KIND_STABLE',
  category: 'spec',
  purpose: 'A field never changes kind (primitive, struct, list, map), and list elements and map values keep their ids.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    if (ctx.baseSchema === undefined) return out
    const base = indexSchema(ctx.baseSchema)
    const proposed = indexSchema(ctx.proposedSchema)
    const inKey = mapKeyTest(ctx.baseSchema)
    for (const c of ctx.changes) {
      if (c.kind === 'kind-changed') {
        if (inKey(c.fieldId)) continue
        const oldType = typeToString(c.from)
        const newType = typeToString(c.to)
        out.push({
          rule: 'FIELD_KIND_STABLE',
          message: `Cannot change column kind: ${subject(c.path, c.fieldId)}: ${oldType} -> ${newType}`,
          fieldId: c.fieldId,
          path: c.path,
          oldType,
          newType,
          explanation: 'A field id must keep its kind. Add a new column with the new shape and drop the old one.'
        })
      } else if (c.kind === 'field-added' && c.parentId !== undefined && (c.field.name === 'element' || c.field.name === 'value')) {
        const parentNow = proposed.byId.get(c.parentId)
        const parentBefore = base.byId.get(c.parentId)
        if (parentNow === undefined || parentBefore === undefined) continue
        const t = parentBefore.type
        const oldId = t.kind === 'list' && parentNow.type.kind === 'list' && c.field.name === 'element'
          ? t.elementId
          : t.kind === 'map' && parentNow.type.kind === 'map' && c.field.name === 'value' ? t.valueId : undefined
        if (oldId === undefined) continue
        out.push({
          rule: 'FIELD_KIND_STABLE',
          message: `Cannot replace ${t.kind === 'list' ? 'list element' : 'map value'}: ${subject(c.path, c.fieldId)}: id ${oldId} -> ${c.fieldId}`,
          fieldId: c.fieldId,
          path: c.path,
          explanation: 'List elements and map values are identified by their ids; keep the existing id.'
        })
      }
    }
    return out
  }
}
