/**
 * A whole schema proposed for a table, made installable: the schema-only compatibility check
 * ("is this schema compatible with table X?", as Confluent Schema Registry and `buf breaking` are
 * asked) takes an Iceberg schema whose field ids are optional and turns it into the schema the
 * table would get.
 *
 * - A field that gives its `id` keeps it: ids are identity, so an id the table has names that
 *   field (a different name is a rename), and the rules judge whatever the ids say.
 * - A field without an id is matched by name among the fields of the same struct in the current
 *   schema (the struct its parent matched), as union-by-name matches (Java
 *   `UpdateSchema.unionByNameWith`); it takes that field's id, and a list element, map key or map
 *   value without an id takes the matched one's. Unmatched fields get fresh ids above
 *   `last-column-id`, in the order they appear.
 * - Fields of the current schema the proposal does not list are dropped: the proposal is the
 *   whole schema, and a drop is what the rules judge (COLUMN_NO_DROP, SCHEMA_COMPATIBILITY, …).
 * - Without `identifier-field-ids` the current ones are kept (a schema written by hand rarely
 *   states them, and leaving them out is not asking to remove them).
 *
 * Nothing is refused here but what cannot be read: type changes, drops and required columns are
 * the rules' to judge, exactly as on a commit.
 */
import { isObject, own } from '../iceberg/json-values.js'
import { parseSchemaShape } from '../iceberg/parse.js'
import { sameSchema } from '../iceberg/type-equality.js'
import type { IcebergType, NestedField, ParseIssue, StructType, TableMetadata } from '../iceberg/types.js'
import { currentSchemaOf, type EvolveResult } from './apply-changes.js'
import { NAME_MAPPING_PROPERTY, updateNameMapping } from './name-mapping.js'

/** Deeper than any real schema; a bound on the recursion over caller input. */
const MAX_DEPTH = 64

class Ids {
  constructor (public last: number) {}
  next (): number { return ++this.last }
}

function isId (v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v)
}

/** Every field of a type by id, struct fields included at every depth. */
function fieldsById (t: IcebergType, out: Map<number, NestedField>): Map<number, NestedField> {
  if (typeof t !== 'object' || !('kind' in t)) return out
  if (t.kind === 'struct') {
    for (const f of t.fields) { out.set(f.id, f); fieldsById(f.type, out) }
  } else if (t.kind === 'list') fieldsById(t.element, out)
  else if (t.kind === 'map') { fieldsById(t.key, out); fieldsById(t.value, out) }
  return out
}

function kindOf (t: IcebergType | undefined): string | undefined {
  return t !== undefined && typeof t === 'object' && 'kind' in t && (t.kind === 'struct' || t.kind === 'list' || t.kind === 'map') ? t.kind : undefined
}

interface Context { readonly ids: Ids, readonly byId: ReadonlyMap<number, NestedField> }

/** The struct's fields as JSON with every id filled; `matched` is the struct they are matched against by name. */
function fillStruct (fields: unknown, matched: StructType | undefined, ctx: Context, depth: number): unknown {
  if (!Array.isArray(fields) || depth > MAX_DEPTH) return fields // the parser names what is wrong
  return fields.map((raw: unknown) => {
    if (!isObject(raw)) return raw
    const given = own(raw, 'id')
    const name = own(raw, 'name')
    const existing = isId(given)
      ? ctx.byId.get(given)
      : matched?.fields.find(f => f.name === name)
    const id = isId(given) ? given : existing?.id ?? ctx.ids.next()
    return { ...raw, id, type: fillType(own(raw, 'type'), existing?.type, ctx, depth + 1) }
  })
}

function fillType (raw: unknown, existing: IcebergType | undefined, ctx: Context, depth: number): unknown {
  if (!isObject(raw) || depth > MAX_DEPTH) return raw
  const type = own(raw, 'type')
  const match = kindOf(existing) === type ? existing : undefined
  if (type === 'struct') {
    return { ...raw, fields: fillStruct(own(raw, 'fields'), match as StructType | undefined, ctx, depth) }
  }
  if (type === 'list') {
    const list = match as Extract<IcebergType, { kind: 'list' }> | undefined
    const elementId = own(raw, 'element-id')
    return {
      ...raw,
      'element-id': isId(elementId) ? elementId : list?.elementId ?? ctx.ids.next(),
      element: fillType(own(raw, 'element'), list?.element, ctx, depth + 1)
    }
  }
  if (type === 'map') {
    const map = match as Extract<IcebergType, { kind: 'map' }> | undefined
    const keyId = own(raw, 'key-id')
    const valueId = own(raw, 'value-id')
    const key = isId(keyId) ? keyId : map?.keyId ?? ctx.ids.next()
    const value = isId(valueId) ? valueId : map?.valueId ?? ctx.ids.next()
    return {
      ...raw,
      'key-id': key,
      'value-id': value,
      key: fillType(own(raw, 'key'), map?.key, ctx, depth + 1),
      value: fillType(own(raw, 'value'), map?.value, ctx, depth + 1)
    }
  }
  return raw
}

function highestId (t: IcebergType): number {
  let max = 0
  const walk = (x: IcebergType): void => {
    if (typeof x !== 'object' || !('kind' in x)) return
    if (x.kind === 'struct') for (const f of x.fields) { max = Math.max(max, f.id); walk(f.type) }
    else if (x.kind === 'list') { max = Math.max(max, x.elementId); walk(x.element) } else if (x.kind === 'map') { max = Math.max(max, x.keyId, x.valueId); walk(x.key); walk(x.value) }
  }
  walk(t)
  return max
}

function describe (issues: readonly ParseIssue[]): string {
  const first = issues[0]
  if (first === undefined) return 'unreadable'
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
  return `${first.message}${first.at === '' ? '' : ` (at ${first.at})`}${more}`
}

/** The schema the table would get from `input` (ids filled as above), or why it cannot be read. */
export function proposeSchema (metadata: TableMetadata, input: unknown): { result: EvolveResult } | { problem: string } {
  if (!isObject(input) || !Array.isArray(own(input, 'fields'))) {
    return { problem: 'expected an Iceberg schema {"type": "struct", "fields": [...]}' }
  }
  const type = own(input, 'type')
  if (type !== undefined && type !== 'struct') return { problem: `a schema is a struct, got type ${JSON.stringify(type)}` }
  const current = currentSchemaOf(metadata)
  const ctx: Context = { ids: new Ids(metadata.lastColumnId), byId: fieldsById(current.struct, new Map()) }
  const filled: Record<string, unknown> = {
    ...input,
    type: 'struct',
    fields: fillStruct(own(input, 'fields'), current.struct, ctx, 0),
    'identifier-field-ids': own(input, 'identifier-field-ids') ?? [...current.identifierFieldIds]
  }
  delete filled['schema-id']
  const issues: ParseIssue[] = []
  const parsed = parseSchemaShape(filled, 'schema', issues)
  if (parsed === undefined) return { problem: describe(issues) }

  const lastColumnId = Math.max(metadata.lastColumnId, highestId(parsed.struct))
  const newFieldIds = Array.from({ length: ctx.ids.last - metadata.lastColumnId }, (_, i) => metadata.lastColumnId + 1 + i)
  const warnings: string[] = []
  const mapping = metadata.properties[NAME_MAPPING_PROPERTY]
  const update = mapping === undefined ? undefined : updateNameMapping(mapping, current, parsed)
  const nameMapping = update !== undefined && update.changed ? { nameMapping: update.text } : {}
  if (update !== undefined && 'problem' in update) warnings.push(`${NAME_MAPPING_PROPERTY} would be left as it is: ${update.problem}`)
  const base = { lastColumnId, newFieldIds, warnings, errors: [], ...nameMapping }
  if (sameSchema(parsed, current)) return { result: { ...base, schema: { ...parsed, schemaId: metadata.currentSchemaId }, noop: true } }
  const existing = metadata.schemas.find(s => s.schemaId !== undefined && sameSchema(s, parsed))
  if (existing?.schemaId !== undefined) return { result: { ...base, schema: { ...parsed, schemaId: existing.schemaId }, reusedSchemaId: existing.schemaId, noop: false } }
  const nextId = metadata.schemas.reduce((max, s) => Math.max(max, (s.schemaId ?? -1) + 1), 0)
  return { result: { ...base, schema: { ...parsed, schemaId: nextId }, noop: false } }
}
