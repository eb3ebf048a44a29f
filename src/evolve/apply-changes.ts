/**
 * Applies high-level schema changes to a table's current schema, purely: no I/O, no clock.
 *
 * What comes out is what the spec asks for (format/spec.md "Schema Evolution") and what Java's
 * `SchemaUpdate` produces: every new field, and every field, element, key and value inside its type,
 * gets a fresh id above `last-column-id`; renames keep ids; only the spec's promotions for the
 * table's format version are made; nothing is ever narrowed. The result reuses the id of an equal
 * existing schema (`TableMetadata.Builder.reuseOrCreateNewSchemaId`) or takes the next free one, and
 * a result equal to the current schema is a no-op.
 *
 * Changes apply in order, each to the result of the ones before. A change that cannot be applied is
 * reported with its index and path and leaves the schema as it was before it; the caller commits
 * nothing while any change was refused.
 */
import { indexSchema } from '../iceberg/schema-index.js'
import { typeToString } from '../iceberg/print.js'
import { isPromotionAllowed, minFormatVersion } from '../iceberg/promotion.js'
import { samePrimitive, sameSchema, sameTypeShape } from '../iceberg/type-equality.js'
import { MAX_FIELD_ID, type IcebergType, type Schema, type StructType, type TableMetadata } from '../iceberg/types.js'
import { changeLabel, type SchemaChangeKind, type SchemaChangeOp, type TypeInput } from './change-ops.js'
import { NAME_MAPPING_PROPERTY, updateNameMapping } from './name-mapping.js'
import { readSchemaInput, readTypeInput } from './type-input.js'
import {
  freeze, idsIn, isPrimitive, resolvePath, setSlotType, slotType, splitPath, structForAdd, thaw, withFreshIds,
  type Slot, type WField, type WStruct, type WType
} from './working-schema.js'

export interface ChangeError {
  /** Position of the change in the list. */
  readonly index: number
  readonly op: SchemaChangeKind
  readonly path?: string
  /** Stands alone: names the change and the column. */
  readonly message: string
}

export interface EvolveResult {
  /** The evolved schema, with the id it will have: reused, next free, or the current one (no-op). */
  readonly schema: Schema
  /** The table's `last-column-id` after the commit: the highest id handed out, never lower than before. */
  readonly lastColumnId: number
  /** Set when the result equals an older schema of the table: the commit only switches to it. */
  readonly reusedSchemaId?: number
  /** The result equals the current schema: there is nothing to commit. */
  readonly noop: boolean
  /** Fresh ids handed out, in order. */
  readonly newFieldIds: readonly number[]
  /**
   * The table's `schema.name-mapping.default` updated for the renames and new columns (a JSON
   * text); undefined when the table has no mapping or nothing in it changes.
   */
  readonly nameMapping?: string
  readonly warnings: readonly string[]
  readonly errors: readonly ChangeError[]
}

/** Thrown inside one change; caught, reported, and the change rolled back. */
class Refusal extends Error {
  constructor (message: string, readonly path?: string) {
    super(message)
  }
}

const LEGACY_SUFFIX = '__legacy_'

/** The current schema of table metadata; throws when the metadata names a schema it does not hold. */
export function currentSchemaOf (metadata: TableMetadata): Schema {
  const current = metadata.schemas.find(s => s.schemaId === metadata.currentSchemaId)
  if (current === undefined) throw new Error(`Cannot evolve table: its metadata has no current schema ${metadata.currentSchemaId}`)
  return current
}

/** Applies `changes` in order to the table's current schema. */
export function applySchemaChanges (metadata: TableMetadata, changes: readonly SchemaChangeOp[]): EvolveResult {
  const current = currentSchemaOf(metadata)
  const e = new Evolver(metadata, current)
  changes.forEach((change, index) => e.apply(change, index))
  const evolved = freeze(e.root, current.identifierFieldIds)
  const base = { lastColumnId: e.lastId, newFieldIds: [...e.newIds], warnings: e.warnings, errors: e.errors, ...nameMappingFor(metadata, current, evolved, e.warnings) }
  if (sameSchema(evolved, current)) {
    return { ...base, schema: { ...evolved, schemaId: metadata.currentSchemaId }, noop: true }
  }
  const existing = metadata.schemas.find(s => s.schemaId !== undefined && sameSchema(s, evolved))
  if (existing?.schemaId !== undefined) {
    return { ...base, schema: { ...evolved, schemaId: existing.schemaId }, reusedSchemaId: existing.schemaId, noop: false }
  }
  const nextId = metadata.schemas.reduce((max, s) => Math.max(max, (s.schemaId ?? -1) + 1), 0)
  return { ...base, schema: { ...evolved, schemaId: nextId }, noop: false }
}

/** The updated name mapping, when the table has one and the change renames or adds columns. */
function nameMappingFor (metadata: TableMetadata, current: Schema, evolved: Schema, warnings: string[]): { nameMapping?: string } {
  const text = metadata.properties[NAME_MAPPING_PROPERTY]
  if (text === undefined) return {}
  const update = updateNameMapping(text, current, evolved)
  if ('problem' in update) {
    warnings.push(`${NAME_MAPPING_PROPERTY} is left as it is: ${update.problem}; files without field ids will not see renamed or new columns`)
    return {}
  }
  return update.changed ? { nameMapping: update.text } : {}
}

/** Ids referenced by any partition spec, any sort order, or the identifier fields: never archived. */
export function protectedIds (metadata: TableMetadata, current: Schema): Map<number, string> {
  const out = new Map<number, string>()
  for (const spec of metadata.partitionSpecs) {
    for (const f of spec.fields) for (const id of f.sourceIds) if (!out.has(id)) out.set(id, `partition spec ${spec.specId} (field ${f.name})`)
  }
  for (const order of metadata.sortOrders) {
    for (const f of order.fields) for (const id of f.sourceIds) if (!out.has(id)) out.set(id, `sort order ${order.orderId}`)
  }
  for (const id of current.identifierFieldIds) if (!out.has(id)) out.set(id, 'the identifier fields')
  return out
}

class Evolver {
  root: WStruct
  lastId: number
  newIds: number[] = []
  readonly warnings: string[] = []
  readonly errors: ChangeError[] = []
  readonly formatVersion: 1 | 2 | 3
  readonly identifierIds: readonly number[]
  readonly protected: Map<number, string>
  private label = ''

  constructor (metadata: TableMetadata, current: Schema) {
    this.root = thaw(current.struct) as WStruct
    // Never below the highest id in use, even if the metadata's counter lags (ids must stay unique).
    this.lastId = Math.max(metadata.lastColumnId, indexSchema(current).highestId)
    this.formatVersion = metadata.formatVersion
    this.identifierIds = current.identifierFieldIds
    this.protected = protectedIds(metadata, current)
  }

  apply (change: SchemaChangeOp, index: number): void {
    const saved = { root: thaw(this.root as StructType) as WStruct, lastId: this.lastId, newIds: this.newIds.length, warnings: this.warnings.length }
    this.label = `change ${index} (${changeLabel(change)})`
    try {
      this.dispatch(change)
    } catch (err) {
      if (!(err instanceof Refusal)) throw err
      this.root = saved.root
      this.lastId = saved.lastId
      this.newIds.length = saved.newIds
      this.warnings.length = saved.warnings
      this.errors.push({ index, op: change.op, ...(err.path !== undefined && { path: err.path }), message: `Cannot apply ${this.label}: ${err.message}` })
    }
  }

  private dispatch (c: SchemaChangeOp): void {
    switch (c.op) {
      case 'add-column':
        // Java UpdateSchema.addColumn(name, …): a dotted top-level name is ambiguous.
        if (c.name.includes('.')) throw new Refusal(`ambiguous name ${c.name}: use add-nested-column with parent and name`, c.name)
        return this.add('', c.name, c.type, c.doc)
      case 'add-nested-column': return this.add(c.parent, c.name, c.type, c.doc)
      case 'rename-column': return this.rename(c.path, c.newName)
      case 'make-column-optional': return this.makeOptional(c.path)
      case 'update-column-type': return this.updateType(c.path, c.type)
      case 'update-doc': return this.updateDoc(c.path, c.doc)
      case 'move-column': return this.move(c.path, c)
      case 'delete-column': return this.delete(c.path)
      case 'union-by-name': return this.unionByName(c.schema)
      case 'ensure-column': return this.ensureColumn(c.path, c.type, c.doc, c.legacyArchival === true)
      case 'ensure-rename': return this.ensureRename(c.from, c.to)
    }
  }

  private nextId = (): number => {
    if (this.lastId >= MAX_FIELD_ID) throw new Refusal(`no field id is left below the reserved range (${MAX_FIELD_ID})`)
    this.lastId++
    this.newIds.push(this.lastId)
    return this.lastId
  }

  private find (path: string): Slot {
    const slot = resolvePath(this.root, path)
    if (slot === undefined) throw new Refusal(`column ${path} does not exist`, path)
    return slot
  }

  private field (path: string, what: string): Extract<Slot, { kind: 'field' }> {
    const slot = this.find(path)
    if (slot.kind !== 'field') throw new Refusal(`cannot ${what} ${slot.path}: it is a ${slot.kind === 'element' ? 'list element' : `map ${slot.kind}`}, not a struct field`, slot.path)
    return slot
  }

  private readType (input: TypeInput, path: string): IcebergType {
    const { type, problem } = readTypeInput(input)
    if (type === undefined) throw new Refusal(`invalid type for ${path}: ${problem ?? 'unreadable'}`, path)
    return type
  }

  private checkVersion (type: IcebergType | WType, path: string): void {
    if (minFormatVersion(type as IcebergType) > this.formatVersion) {
      throw new Refusal(`type ${typeToString(type as IcebergType)} of ${path} needs format version 3; the table is v${this.formatVersion}`, path)
    }
  }

  /** Adds an optional field with fresh ids (the column's first, then its type's). */
  private addField (struct: WStruct, structPath: string, name: string, type: IcebergType, doc: string | undefined): WField {
    const path = structPath === '' ? name : `${structPath}.${name}`
    if (struct.fields.some(f => f.name === name)) throw new Refusal(`name already exists: ${path}`, path)
    this.checkVersion(type, path)
    const id = this.nextId()
    const field: WField = { id, name, required: false, type: withFreshIds(type, this.nextId) }
    if (doc !== undefined) field.doc = doc
    struct.fields.push(field)
    return field
  }

  private add (parent: string, name: string, input: TypeInput, doc: string | undefined): void {
    const target = structForAdd(this.root, parent)
    if (typeof target === 'string') throw new Refusal(target, parent)
    this.addField(target.struct, target.path, name, this.readType(input, parent === '' ? name : `${parent}.${name}`), doc)
  }

  private rename (path: string, newName: string): void {
    const slot = this.field(path, 'rename')
    if (newName === slot.field.name) return
    if (slot.parent.fields.some(f => f.name === newName)) {
      throw new Refusal(`cannot rename ${slot.path} to ${newName}: a column of that name already exists there`, slot.path)
    }
    slot.field.name = newName
  }

  private makeOptional (path: string): void {
    const slot = this.find(path)
    switch (slot.kind) {
      case 'field': slot.field.required = false; return
      case 'element': slot.list.elementRequired = false; return
      case 'value': slot.map.valueRequired = false; return
      case 'key': throw new Refusal(`map keys are always required: ${slot.path}`, slot.path)
    }
  }

  private updateType (path: string, input: TypeInput): void {
    const slot = this.find(path)
    // Java SchemaUpdate: "Cannot update map keys" (keys are hashed and compared by their type).
    if (slot.kind === 'key') throw new Refusal(`cannot update map keys: ${slot.path}`, slot.path)
    const from = slotType(slot)
    const to = this.readType(input, slot.path)
    if (!isPrimitive(from) || !isPrimitive(to)) {
      throw new Refusal(`cannot change column type of ${slot.path}: ${typeToString(from as IcebergType)} -> ${typeToString(to)}: only primitive types are promoted`, slot.path)
    }
    if (samePrimitive(from, to)) return
    if (!isPromotionAllowed(from, to, this.formatVersion)) {
      throw new Refusal(`cannot change column type of ${slot.path}: ${typeToString(from)} -> ${typeToString(to)} is not a promotion the spec allows for format version ${this.formatVersion} (${allowedPromotions(this.formatVersion)})`, slot.path)
    }
    setSlotType(slot, to)
  }

  private updateDoc (path: string, doc: string | null): void {
    const slot = this.field(path, 'document')
    if (doc === null) delete slot.field.doc
    else slot.field.doc = doc
  }

  private move (path: string, where: { first?: true, before?: string, after?: string }): void {
    const slot = this.field(path, 'move')
    const fields = slot.parent.fields
    const from = fields.indexOf(slot.field)
    if (where.first === true) {
      fields.splice(from, 1)
      fields.unshift(slot.field)
      return
    }
    const ref = (where.before ?? where.after) as string
    const anchor = this.sibling(slot, ref)
    fields.splice(from, 1)
    const at = fields.indexOf(anchor)
    fields.splice(where.before !== undefined ? at : at + 1, 0, slot.field)
  }

  /** The field `ref` names beside `slot` (a full path, or a name in the same struct). */
  private sibling (slot: Extract<Slot, { kind: 'field' }>, ref: string): WField {
    const resolved = resolvePath(this.root, ref)
    let anchor: WField | undefined
    if (resolved?.kind === 'field' && resolved.parent === slot.parent) anchor = resolved.field
    else anchor = slot.parent.fields.find(f => f.name === ref)
    if (anchor === undefined) {
      if (resolved !== undefined) throw new Refusal(`cannot move ${slot.path} next to ${resolved.path}: a field moves only within its own struct`, slot.path)
      throw new Refusal(`cannot move ${slot.path}: column ${ref} does not exist`, slot.path)
    }
    if (anchor === slot.field) throw new Refusal(`cannot move ${slot.path} next to itself`, slot.path)
    return anchor
  }

  private delete (path: string): void {
    const slot = this.find(path)
    if (slot.kind === 'element') throw new Refusal(`cannot delete element type from list: ${slot.path}`, slot.path)
    if (slot.kind === 'key') throw new Refusal(`cannot delete map keys: ${slot.path}`, slot.path)
    if (slot.kind === 'value') throw new Refusal(`cannot delete value type from map: ${slot.path}`, slot.path)
    const ids = [slot.field.id, ...idsIn(slot.field.type)]
    const ident = ids.find(id => this.identifierIds.includes(id))
    if (ident !== undefined) {
      throw new Refusal(ident === slot.field.id
        ? `cannot delete identifier field ${slot.path} (id ${ident}): it is one of the table's identifier fields`
        : `cannot delete ${slot.path}: it holds identifier field id ${ident}`, slot.path)
    }
    slot.parent.fields.splice(slot.parent.fields.indexOf(slot.field), 1)
  }

  /** Java `UpdateSchema.unionByNameWith`, minus silent promotion: a type difference is refused. */
  private unionByName (input: unknown): void {
    const { schema, problem } = readSchemaInput(input)
    if (schema === undefined) throw new Refusal(`invalid schema: ${problem ?? 'unreadable'}`)
    this.unionStruct(schema.struct, this.root, '')
  }

  private unionStruct (given: StructType, into: WStruct, at: string): void {
    for (const g of given.fields) {
      const path = at === '' ? g.name : `${at}.${g.name}`
      const existing = into.fields.find(f => f.name === g.name)
      if (existing === undefined) {
        if (g.required) this.warnings.push(`${this.label}: added ${path} as optional: a column added to a table with data must be optional`)
        this.addField(into, at, g.name, g.type, g.doc)
        continue
      }
      if (g.doc !== undefined && g.doc !== existing.doc) existing.doc = g.doc
      if (!g.required && existing.required) existing.required = false
      else if (g.required && !existing.required) this.warnings.push(`${this.label}: ${path} stays optional: a column is never made required`)
      existing.type = this.unionType(g.type, existing.type, path)
    }
  }

  private unionType (given: IcebergType, existing: WType, path: string): WType {
    if (isPrimitive(given) || isPrimitive(existing)) {
      if (isPrimitive(given) && isPrimitive(existing) && samePrimitive(given, existing)) return existing
      throw new Refusal(`type of ${path} is ${typeToString(existing as IcebergType)}, the given schema has ${typeToString(given)}; union-by-name never changes a type (use update-column-type for a promotion)`, path)
    }
    if (given.kind === 'struct' && existing.kind === 'struct') {
      this.unionStruct(given, existing, path)
      return existing
    }
    if (given.kind === 'list' && existing.kind === 'list') {
      if (!given.elementRequired) existing.elementRequired = false
      existing.element = this.unionType(given.element, existing.element, `${path}.element`)
      return existing
    }
    if (given.kind === 'map' && existing.kind === 'map') {
      if (!sameTypeShape(given.key, existing.key as IcebergType)) {
        throw new Refusal(`map key of ${path} is ${typeToString(existing.key as IcebergType)}, the given schema has ${typeToString(given.key)}; map keys never change`, `${path}.key`)
      }
      if (!given.valueRequired) existing.valueRequired = false
      existing.value = this.unionType(given.value, existing.value, `${path}.value`)
      return existing
    }
    throw new Refusal(`${path} is a ${existing.kind}, the given schema has a ${given.kind}; a column never changes kind`, path)
  }

  private ensureColumn (path: string, input: TypeInput, doc: string | undefined, archival: boolean): void {
    const type = this.readType(input, path)
    const slot = resolvePath(this.root, path)
    if (slot === undefined) {
      const { parent, name } = splitPath(path)
      const target = structForAdd(this.root, parent)
      if (typeof target === 'string') throw new Refusal(target, path)
      this.addField(target.struct, target.path, name, type, doc)
      return
    }
    if (slot.kind !== 'field') throw new Refusal(`${slot.path} is a ${slot.kind === 'element' ? 'list element' : `map ${slot.kind}`}; ensure-column works on struct fields`, slot.path)
    const field = slot.field
    const setDoc = (): void => { if (doc !== undefined && doc !== field.doc) field.doc = doc }
    if (sameTypeShape(field.type as IcebergType, type)) { setDoc(); return }
    // Evolve in place where the spec allows it, on a copy: a refusal deep inside leaves the column,
    // and the ids handed out meanwhile, as they were.
    const mark = { lastId: this.lastId, newIds: this.newIds.length }
    const ensured = this.ensureType(thaw(field.type as IcebergType), type, slot.path)
    if (typeof ensured !== 'string') {
      field.type = ensured
      setDoc()
      return
    }
    this.lastId = mark.lastId
    this.newIds.length = mark.newIds
    const had = typeToString(field.type as IcebergType)
    if (!archival) {
      throw new Refusal(`${slot.path} is ${had}, wanted ${typeToString(type)}: ${ensured}; ` +
        `set legacy-archival to keep the old column as ${field.name}${LEGACY_SUFFIX}N and add a new ${field.name}`, slot.path)
    }
    const archivedAs = this.archive(slot, `replaced by a new ${field.name} of type ${typeToString(type)}`)
    this.warnings.push(`${this.label}: archived ${slot.path} (id ${field.id}, ${had}) as ${archivedAs}; the new ${field.name} starts empty`)
    this.checkVersion(type, slot.path)
    const splitAt = splitPath(slot.path).parent
    this.addField(slot.parent, splitAt, splitPath(slot.path).name, type, doc)
  }

  /**
   * `existing` brought to at least `wanted`, evolving it in place: struct fields `wanted` names
   * and `existing` lacks are added (optional, fresh ids), primitives are promoted as the spec
   * allows, lists and maps are followed into their elements and values. Fields `wanted` does not
   * name stay, as do nullability and nested docs. Any other difference is returned as the reason
   * it cannot be done.
   */
  private ensureType (existing: WType, wanted: IcebergType, path: string): WType | string {
    if (isPrimitive(existing) || isPrimitive(wanted)) {
      if (isPrimitive(existing) && isPrimitive(wanted)) {
        if (samePrimitive(existing, wanted)) return existing
        if (isPromotionAllowed(existing, wanted, this.formatVersion)) return wanted
      }
      return `${path} ${typeToString(existing as IcebergType)} -> ${typeToString(wanted)} is not a promotion the spec allows for format version ${this.formatVersion}`
    }
    if (existing.kind === 'struct' && wanted.kind === 'struct') {
      for (const w of wanted.fields) {
        const e = existing.fields.find(f => f.name === w.name)
        if (e === undefined) {
          this.addField(existing, path, w.name, w.type, w.doc)
          continue
        }
        const t = this.ensureType(e.type, w.type, `${path}.${w.name}`)
        if (typeof t === 'string') return t
        e.type = t
      }
      return existing
    }
    if (existing.kind === 'list' && wanted.kind === 'list') {
      const t = this.ensureType(existing.element, wanted.element, `${path}.element`)
      if (typeof t === 'string') return t
      existing.element = t
      return existing
    }
    if (existing.kind === 'map' && wanted.kind === 'map') {
      // Java SchemaUpdate: map keys never change (they are hashed and compared by type).
      if (!sameTypeShape(existing.key as IcebergType, wanted.key)) return `map keys never change: ${path}.key is ${typeToString(existing.key as IcebergType)}`
      const t = this.ensureType(existing.value, wanted.value, `${path}.value`)
      if (typeof t === 'string') return t
      existing.value = t
      return existing
    }
    return `${path} is a ${existing.kind}, not a ${wanted.kind}; a column never changes kind`
  }

  private ensureRename (from: string, to: string): void {
    const { parent, name: fromName } = splitPath(from)
    let toName = to
    if (to.includes('.')) {
      const t = splitPath(to)
      if (t.parent !== parent) throw new Refusal(`${from} and ${to} are not under the same parent; ensure-rename renames within one struct`, from)
      toName = t.name
    }
    if (fromName === toName) return
    const target = structForAdd(this.root, parent)
    const struct = typeof target === 'string' ? undefined : target.struct
    const old = struct?.fields.find(f => f.name === fromName)
    const blocker = struct?.fields.find(f => f.name === toName)
    const toPath = parent === '' ? toName : `${parent}.${toName}`
    if (struct === undefined || (old === undefined && blocker === undefined)) {
      this.warnings.push(`${this.label}: neither ${from} nor ${toPath} exists; nothing to rename`)
      return
    }
    if (old === undefined) return // done already
    if (blocker !== undefined) {
      const slot = { kind: 'field' as const, path: toPath, parent: struct, field: blocker }
      const archivedAs = this.archive(slot, `its name was taken by ${from} (ensure-rename)`)
      this.warnings.push(`${this.label}: both ${from} and ${toPath} existed; archived ${toPath} (id ${blocker.id}) as ${archivedAs}, then renamed ${from}`)
    }
    old.name = toName
  }

  /**
   * Renames a column out of the way: `<name>__legacy_N` (the first free N), optional, its doc marked
   * archived. Its id and data stay; readers by name see the new column. A column a partition spec,
   * sort order or the identifier fields refer to is never archived: their meaning would change.
   */
  private archive (slot: Extract<Slot, { kind: 'field' }>, reason: string): string {
    const field = slot.field
    for (const id of [field.id, ...idsIn(field.type)]) {
      const by = this.protected.get(id)
      if (by !== undefined) {
        throw new Refusal(`cannot archive ${slot.path} (id ${field.id}): ${id === field.id ? 'it' : `its field id ${id}`} is referenced by ${by}; ` +
          'a column that partitioning, sorting or row identity depends on is never archived', slot.path)
      }
    }
    let n = 1
    while (slot.parent.fields.some(f => f.name === `${field.name}${LEGACY_SUFFIX}${n}`)) n++
    const archived = `${field.name}${LEGACY_SUFFIX}${n}`
    const oldDoc = field.doc
    field.name = archived
    field.required = false
    field.doc = `ARCHIVED: ${reason}${oldDoc === undefined || oldDoc === '' ? '' : `. Was: ${oldDoc}`}`
    const { parent } = splitPath(slot.path)
    return parent === '' ? archived : `${parent}.${archived}`
  }
}

function allowedPromotions (formatVersion: number): string {
  const base = 'int -> long, float -> double, decimal(P, S) -> decimal(P2, S) with P2 > P'
  return formatVersion >= 3 ? `${base}, date -> timestamp or timestamp_ns, unknown -> any type` : base
}
