/**
 * SCHEMA_COMPATIBILITY's transitive levels compare old schemas with the proposed one on the
 * fields the commit changes only; this checks, on random histories, that the answer is the one the
 * definition gives (every field of every old schema compared).
 */
import fc from 'fast-check'
import t from 'tap'
import { transitiveProblems } from '../../../src/engine/rules/platform/schema-compatibility.js'
import type { NestedField, PrimitiveType, Schema } from '../../../src/iceberg/types.js'

const TYPES: PrimitiveType[] = [{ kind: 'int' }, { kind: 'long' }, { kind: 'float' }, { kind: 'double' }, { kind: 'string' }] as PrimitiveType[]

/** A column: id, type, required, defaulted, and whether it is a struct holding one child (id + 50). */
const columnArb = fc.tuple(fc.integer({ min: 1, max: 8 }), fc.nat({ max: TYPES.length - 1 }), fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean())
const schemaArb = fc.uniqueArray(columnArb, { selector: c => c[0], maxLength: 6 })

function toSchema (columns: ReadonlyArray<[number, number, boolean, boolean, boolean, boolean]>, schemaId: number): Schema {
  const fields: NestedField[] = columns.map(([id, type, required, defaulted, nested, childRequired]) => {
    const child: NestedField = { id: id + 50, name: 'x', required: childRequired, type: TYPES[type] as PrimitiveType }
    return {
      id,
      name: `c${id}`,
      required,
      type: nested ? { kind: 'struct', fields: [child] } : TYPES[type] as PrimitiveType,
      ...(defaulted && !nested ? { initialDefault: 1 } : {})
    } as NestedField
  })
  return { schemaId, identifierFieldIds: [], struct: { kind: 'struct', fields } }
}

t.test('comparing the changed fields only gives the definition\'s problems, in its order', async t => {
  const levels = ['BACKWARD_TRANSITIVE', 'FORWARD_TRANSITIVE', 'FULL_TRANSITIVE']
  fc.assert(fc.property(
    fc.array(schemaArb, { minLength: 1, maxLength: 6 }),
    schemaArb,
    fc.constantFrom(...levels),
    fc.constantFrom(2, 3),
    (history, next, level, fv) => {
      const schemas = history.map((c, i) => toSchema(c, i))
      const current = schemas[schemas.length - 1] as Schema
      const proposed = toSchema(next, schemas.length)
      const show = (list: ReturnType<typeof transitiveProblems>): string =>
        JSON.stringify(list.map(([p, s]) => [p.kind, p.field.id, p.message, p.oldType, p.newType, s]))
      return show(transitiveProblems(level, schemas, current, proposed, fv as 2 | 3)) ===
        show(transitiveProblems(level, schemas, current, proposed, fv as 2 | 3, true))
    }
  ), { numRuns: 1000 })
  t.pass('1000 random histories agree')
})

t.test('a commit that changes nothing compares nothing, and a type change is found against old schemas', async t => {
  const old = toSchema([[1, 0, false, false, false, false]], 0) // c1 int
  const current = toSchema([[1, 1, false, false, false, false]], 1) // c1 long (int -> long)
  t.same(transitiveProblems('FORWARD_TRANSITIVE', [old, current], current, current, 2), [])
  const proposed = toSchema([[1, 1, false, false, false, false], [2, 4, true, false, false, false]], 2)
  const found = transitiveProblems('FULL_TRANSITIVE', [old, current], current, proposed, 2).map(([p, s]) => [p.kind, p.field.id, s])
  t.same(found, [['missing-required', 2, 0]], 'a new required column without default: old data has no value for it')
})
