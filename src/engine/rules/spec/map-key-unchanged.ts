import { typeToString } from '../../../iceberg/print.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, mapKeyTest, subject } from './helpers.js'

/**
 * A map's key never changes: not its id, not its type (not even int→long), not the fields of a
 * struct key. Java's SchemaUpdate refuses every one ("Cannot update map keys", "Cannot alter map
 * keys", "Cannot add fields to map keys"); keys are compared and hashed as written.
 */
export const mapKeyUnchanged: Rule = {
  id: 'MAP_KEY_UNCHANGED',
  category: 'spec',
  purpose: 'A map key keeps its id and its type, including every field of a struct key.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    if (ctx.baseSchema === undefined) return out
    const base = indexSchema(ctx.baseSchema)
    const inKey = mapKeyTest(ctx.baseSchema)
    const push = (fieldId: number, path: string, detail: string, oldType?: string, newType?: string): void => {
      out.push({
        rule: 'MAP_KEY_UNCHANGED',
        message: `Cannot change map key: ${subject(path, fieldId)}: ${detail}`,
        fieldId,
        path,
        ...(oldType === undefined ? {} : { oldType }),
        ...(newType === undefined ? {} : { newType }),
        explanation: 'Map keys cannot evolve. Add a new map column with the new key type and migrate the data.'
      })
    }
    for (const c of ctx.changes) {
      switch (c.kind) {
        case 'type-changed':
        case 'kind-changed':
          if (inKey(c.fieldId)) push(c.fieldId, c.path, `${typeToString(c.from)} -> ${typeToString(c.to)}`, typeToString(c.from), typeToString(c.to))
          break
        case 'field-renamed':
        case 'nullability-changed':
        case 'field-reordered':
          if (inKey(c.fieldId)) push(c.fieldId, c.path, c.kind.replace('field-', '').replace('-changed', ' changed'))
          break
        case 'field-dropped':
          if (inKey(c.fieldId) && !(c.field.name === 'key' && c.field.id === c.fieldId && base.byId.get(c.parentId ?? -1)?.type.kind === 'map')) {
            push(c.fieldId, c.path, 'field dropped from the key')
          }
          break
        case 'field-added': {
          if (c.parentId === undefined) break
          const parentBefore = base.byId.get(c.parentId)
          if (inKey(c.parentId)) push(c.fieldId, c.path, 'field added to the key')
          else if (c.field.name === 'key' && c.field.id === c.fieldId && parentBefore?.type.kind === 'map') {
            push(c.fieldId, c.path, `key id ${parentBefore.type.keyId} -> ${c.fieldId}`)
          }
          break
        }
        default:
      }
    }
    return out
  }
}
