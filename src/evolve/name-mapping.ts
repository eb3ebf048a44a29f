/**
 * Keeps a table's name mapping in step with a schema change, as Java's `UpdateSchema` does.
 *
 * Files written without field ids (imported Parquet, Avro or ORC: `migrate`, `add_files`) are read
 * through the table property `schema.name-mapping.default` (spec "Column Projection": "Name
 * mapping"), a JSON list of `{"field-id", "names", "fields"}`. When a column is renamed, its new
 * name joins the old ones, so files written under either name still resolve to it; a new column
 * gets an entry with its name (and its nested fields'), so files added later that carry it are
 * read. A name that now belongs to another field of the same struct is taken from the field that
 * had it: after `drop x; add x`, files with `x` belong to the new column. Java does the same in
 * `MappingUtil.update`. A table without the property is left without one.
 */
import { indexSchema } from '../iceberg/schema-index.js'
import type { IcebergType, Schema } from '../iceberg/types.js'

export const NAME_MAPPING_PROPERTY = 'schema.name-mapping.default'

interface Mapped {
  readonly 'field-id'?: number
  readonly names: readonly string[]
  readonly fields?: readonly Mapped[]
}

interface Added { readonly id: number, readonly name: string, readonly type: IcebergType }

/** Parent key of top-level fields (Java uses -1 as well). */
const ROOT = -1

type NameMappingUpdate =
  | { readonly changed: false }
  | { readonly changed: true, readonly text: string }
  | { readonly changed: false, readonly problem: string }

/** The mapping `text` after the change from schema `from` to schema `to`. */
export function updateNameMapping (text: string, from: Schema, to: Schema): NameMappingUpdate {
  let root: Mapped[]
  try {
    const parsed: unknown = JSON.parse(text)
    const problem = mappingProblem(parsed, 'the mapping')
    if (problem !== undefined) return { changed: false, problem }
    root = parsed as Mapped[]
  } catch (err) {
    return { changed: false, problem: `it is not JSON (${(err as Error).message})` }
  }
  const before = indexSchema(from)
  const after = indexSchema(to)
  const renamed = new Map<number, string>()
  const added = new Map<number, Added[]>()
  for (let pos = 0; pos < after.size; pos++) {
    const id = after.idAt(pos)
    if (after.fieldAt(pos) === undefined) continue // elements, keys and values keep their role names
    const was = before.positionOf(id)
    if (was >= 0) {
      if (before.nameAt(was) !== after.nameAt(pos)) renamed.set(id, after.nameAt(pos))
      continue
    }
    // The top-most new field only: its own mapping covers what is nested in it.
    const parent = after.parentAt(pos)
    const parentId = parent < 0 ? ROOT : after.idAt(parent)
    if (parentId !== ROOT && before.positionOf(parentId) < 0) continue
    const list = added.get(parentId) ?? []
    list.push({ id, name: after.nameAt(pos), type: after.typeAt(pos) })
    added.set(parentId, list)
  }
  if (renamed.size === 0 && added.size === 0) return { changed: false }

  const fieldsOf = (list: readonly Mapped[]): Mapped[] => {
    const updated = list.map(m => {
      const id = m['field-id']
      const newName = id === undefined ? undefined : renamed.get(id)
      const names = newName === undefined || m.names.includes(newName) ? [...m.names] : [...m.names, newName]
      const nested = withAdded(Array.isArray(m.fields) ? fieldsOf(m.fields) : undefined, id)
      return entry(id, names, nested)
    })
    // A name a sibling was renamed to is no longer the old holder's.
    const taken = new Map<string, number>()
    for (const m of updated) {
      const id = m['field-id']
      const newName = id === undefined ? undefined : renamed.get(id)
      if (newName !== undefined && id !== undefined) taken.set(newName, id)
    }
    return taken.size === 0 ? updated : updated.map(m => without(m, taken))
  }

  const withAdded = (list: Mapped[] | undefined, parentId: number | undefined): Mapped[] | undefined => {
    const adds = parentId === undefined ? undefined : added.get(parentId)
    if (adds === undefined) return list
    const created = adds.map(a => entry(a.id, [a.name], nestedOf(a.type)))
    if (list === undefined || list.length === 0) return created
    const taken = new Map(adds.map(a => [a.name, a.id]))
    const byId = new Map(created.map(c => [c['field-id'] as number, c]))
    const merged = new Set<number>()
    const out = list.map(m => {
      const stripped = without(m, taken)
      const id = stripped['field-id']
      const same = id === undefined ? undefined : byId.get(id)
      if (same === undefined || id === undefined) return stripped
      // An id the mapping already knows (a field brought back): one entry with both names.
      merged.add(id)
      return entry(id, [...stripped.names, ...same.names.filter(n => !stripped.names.includes(n))], mergeNested(stripped.fields, same.fields))
    })
    for (const c of created) if (!merged.has(c['field-id'] as number)) out.push(c)
    return out
  }

  const result = withAdded(fieldsOf(root), ROOT) ?? []
  return { changed: true, text: JSON.stringify(result) }
}

function entry (id: number | undefined, names: readonly string[], fields: readonly Mapped[] | undefined): Mapped {
  return { ...(id === undefined ? {} : { 'field-id': id }), names, ...(fields === undefined ? {} : { fields }) }
}

/** `m` without the names in `taken` that now belong to another field. */
function without (m: Mapped, taken: ReadonlyMap<string, number>): Mapped {
  const names = m.names.filter(n => { const owner = taken.get(n); return owner === undefined || owner === m['field-id'] })
  return names.length === m.names.length ? m : entry(m['field-id'], names, m.fields)
}

function mergeNested (stale: readonly Mapped[] | undefined, fresh: readonly Mapped[] | undefined): Mapped[] | undefined {
  if (stale === undefined || stale.length === 0) return fresh === undefined ? undefined : [...fresh]
  if (fresh === undefined) return [...stale]
  const byId = new Map(fresh.map(f => [f['field-id'], f]))
  const out = stale.map(s => {
    const f = s['field-id'] === undefined ? undefined : byId.get(s['field-id'])
    if (f === undefined) return s
    byId.delete(s['field-id'])
    return entry(s['field-id'], [...s.names, ...f.names.filter(n => !s.names.includes(n))], mergeNested(s.fields, f.fields))
  })
  return [...out, ...byId.values()]
}

/** The mapping of a new field's type: struct fields by name, `element`, `key` and `value`. */
function nestedOf (type: IcebergType): Mapped[] | undefined {
  switch (type.kind) {
    case 'struct': return type.fields.map(f => entry(f.id, [f.name], nestedOf(f.type)))
    case 'list': return [entry(type.elementId, ['element'], nestedOf(type.element))]
    case 'map': return [entry(type.keyId, ['key'], nestedOf(type.key)), entry(type.valueId, ['value'], nestedOf(type.value))]
    default: return undefined
  }
}

/** Why `value` is not a name mapping (a list of `{field-id?, names, fields?}`), or undefined. */
function mappingProblem (value: unknown, at: string): string | undefined {
  if (!Array.isArray(value)) return `${at} is not a JSON array`
  for (let i = 0; i < value.length; i++) {
    const m: unknown = value[i]
    const here = `${at}[${i}]`
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return `${here} is not an object`
    const o = m as Record<string, unknown>
    if (o['field-id'] !== undefined && !Number.isInteger(o['field-id'])) return `${here}.field-id is not an integer`
    if (!Array.isArray(o.names) || o.names.some(n => typeof n !== 'string')) return `${here}.names is not a list of strings`
    if (o.fields !== undefined && o.fields !== null) {
      const nested = mappingProblem(o.fields, `${here}.fields`)
      if (nested !== undefined) return nested
    }
  }
  return undefined
}
