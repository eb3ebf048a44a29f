/**
 * Indexes of a schema: fields by id and by full path, parents, highest id.
 *
 * List elements and map keys/values have ids of their own (spec "Nested Types"); they appear here
 * as fields named `element`, `key` and `value` (paths `tags.element`, `m.key`, `m.value.zip`).
 * The walk is iterative and linear, so a deep or wide schema costs no stack and no quadratic work.
 * Full paths and the by-path map are built on first use: most commits never need most of them,
 * and on a 100,000-field schema the strings alone would dominate the cost.
 */
import type { IcebergType, NestedField, Schema } from './types.js'

export interface IndexedField {
  readonly id: number
  readonly name: string
  /** Dotted full path from the schema root. */
  readonly path: string
  /** Id of the enclosing struct field, list or map; undefined at the top level. */
  readonly parentId?: number
  /** Position among its siblings (element 0; key 0 and value 1). */
  readonly index: number
  readonly required: boolean
  readonly type: IcebergType
  /** The struct field itself; undefined for list elements and map keys/values. */
  readonly field?: NestedField
}

export interface SchemaIndex {
  readonly byId: ReadonlyMap<number, IndexedField>
  readonly byPath: ReadonlyMap<string, number>
  /** Highest field id in the schema (0 when it has no fields). */
  readonly highestId: number
  /**
   * Every field in pre-order (parents before children, siblings in order). Code that walks all of
   * them on every commit uses an indexed loop: such a loop often runs before the optimising
   * compiler has seen it, and there a `for...of` allocates an iterator result per field.
   */
  readonly fields: readonly IndexedField[]
  /** Ids that occur more than once; `byId` keeps the first occurrence. */
  readonly duplicateIds: readonly number[]
  /** Full paths that occur more than once (e.g. a top-level `a.b` next to struct `a` with `b`). */
  readonly duplicatePaths: readonly string[]
}

/**
 * One indexed field. A struct field (most of a schema) keeps only its NestedField, its parent and
 * its position, and reads id, name, required and type through it: on a 100,000-field schema the
 * index is built twice per commit (base and proposed), and every word per entry shows up as
 * garbage-collector time. List elements and map keys/values, which have no NestedField, hold their
 * own values (RoleEntry).
 */
abstract class Entry implements IndexedField {
  abstract readonly id: number
  abstract readonly name: string
  abstract readonly required: boolean
  abstract readonly type: IcebergType
  abstract readonly field: NestedField | undefined
  private fullPath: string | undefined = undefined
  constructor (readonly parent: Entry | undefined, readonly index: number) {}

  get parentId (): number | undefined {
    return this.parent?.id
  }

  get path (): string {
    if (this.fullPath !== undefined) return this.fullPath
    // Iterative: climb to the nearest ancestor whose path is known, then fill in downwards.
    const chain: Entry[] = []
    let e: Entry | undefined = this
    while (e !== undefined && e.fullPath === undefined) { chain.push(e); e = e.parent }
    let prefix = e?.fullPath
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i] as Entry
      c.fullPath = prefix === undefined ? c.name : prefix + '.' + c.name
      prefix = c.fullPath
    }
    return prefix as string
  }
}

class FieldEntry extends Entry {
  constructor (readonly field: NestedField, parent: Entry | undefined, index: number) {
    super(parent, index)
  }

  get id (): number { return this.field.id }
  get name (): string { return this.field.name }
  get required (): boolean { return this.field.required }
  get type (): IcebergType { return this.field.type }
}

/** A list element or a map key or value: named after its role. */
class RoleEntry extends Entry {
  readonly field: undefined = undefined
  constructor (
    readonly id: number,
    readonly name: string,
    parent: Entry | undefined,
    index: number,
    readonly required: boolean,
    readonly type: IcebergType
  ) {
    super(parent, index)
  }
}

/**
 * Fields by id. Field ids are small integers handed out upwards from 1 (spec "Table Metadata":
 * last-column-id), so they index an array: one load per lookup, where a Map of 100,000 entries
 * costs a hash probe, several times the memory and, on big schemas, the garbage collector's time.
 * Ids too sparse for an array (or negative) go to a Map instead. It iterates like the Map it
 * stands for: first occurrences in pre-order.
 */
class FieldsById implements ReadonlyMap<number, Entry> {
  readonly size: number
  private readonly slots: ReadonlyArray<Entry | undefined> | undefined
  private readonly sparse: Map<number, Entry> | undefined
  private asMap: Map<number, Entry> | undefined = undefined

  /** Fills the table from `fields` (pre-order), appending every repeated id to `duplicates`. */
  constructor (private readonly fields: readonly Entry[], dense: boolean, highest: number, duplicates: number[]) {
    if (dense) {
      const slots = new Array<Entry | undefined>(highest + 1)
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i] as Entry
        if (slots[f.id] === undefined) slots[f.id] = f
        else duplicates.push(f.id)
      }
      this.slots = slots
    } else {
      const sparse = new Map<number, Entry>()
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i] as Entry
        if (sparse.has(f.id)) duplicates.push(f.id)
        else sparse.set(f.id, f)
      }
      this.sparse = sparse
    }
    this.size = fields.length - duplicates.length
  }

  get (id: number): Entry | undefined {
    const slots = this.slots
    if (slots === undefined) return this.sparse?.get(id)
    return id >= 0 && id < slots.length ? slots[id] : undefined
  }

  has (id: number): boolean {
    return this.get(id) !== undefined
  }

  /** Iteration is rare (reports, history checks): a real Map is built for it on first use. */
  private map (): Map<number, Entry> {
    if (this.sparse !== undefined) return this.sparse
    if (this.asMap === undefined) {
      const m = new Map<number, Entry>()
      for (const f of this.fields) if (this.get(f.id) === f) m.set(f.id, f)
      this.asMap = m
    }
    return this.asMap
  }

  forEach (fn: (value: Entry, key: number, map: ReadonlyMap<number, Entry>) => void, thisArg?: unknown): void {
    this.map().forEach((v, k) => fn.call(thisArg, v, k, this))
  }

  entries (): MapIterator<[number, Entry]> { return this.map().entries() }
  keys (): MapIterator<number> { return this.map().keys() }
  values (): MapIterator<Entry> { return this.map().values() }
  [Symbol.iterator] (): MapIterator<[number, Entry]> { return this.map().entries() }
}

/** Ids up to twice the field count plus this many index an array (unused slots are cheap). */
const DENSE_SLACK = 1024

class Index implements SchemaIndex {
  readonly byId: FieldsById
  readonly duplicateIds: number[] = []
  private paths: Map<string, number> | undefined = undefined
  private pathDuplicates: string[] = []

  constructor (readonly fields: readonly Entry[], dense: boolean, readonly highestId: number) {
    this.byId = new FieldsById(fields, dense, highestId, this.duplicateIds)
  }

  get byPath (): ReadonlyMap<string, number> {
    if (this.paths === undefined) {
      const paths = new Map<string, number>()
      for (const f of this.fields) {
        const p = f.path
        if (paths.has(p)) this.pathDuplicates.push(p)
        else paths.set(p, f.id)
      }
      this.paths = paths
    }
    return this.paths
  }

  get duplicatePaths (): readonly string[] {
    void this.byPath
    return this.pathDuplicates
  }
}

const cache = new WeakMap<Schema, SchemaIndex>()

/** Builds (or returns the cached) index of a schema. Schemas are immutable values, so caching is safe. */
export function indexSchema (schema: Schema): SchemaIndex {
  const hit = cache.get(schema)
  if (hit !== undefined) return hit
  const index = buildIndex(schema.struct)
  cache.set(schema, index)
  return index
}

/** Indexes any type tree as if it were a schema root. */
export function indexType (root: IcebergType): SchemaIndex {
  return buildIndex(root)
}

/** Pushes the children of `type` onto `stack` in reverse, so they pop in order (pre-order walk). */
function pushChildren (stack: Entry[], type: IcebergType, parent: Entry | undefined): void {
  // Plain loops and no closures: this runs once per field of every schema the gate sees.
  switch (type.kind) {
    case 'struct':
      for (let i = type.fields.length - 1; i >= 0; i--) stack.push(new FieldEntry(type.fields[i] as NestedField, parent, i))
      return
    case 'list':
      stack.push(new RoleEntry(type.elementId, 'element', parent, 0, type.elementRequired, type.element))
      return
    case 'map':
      stack.push(new RoleEntry(type.valueId, 'value', parent, 1, type.valueRequired, type.value))
      stack.push(new RoleEntry(type.keyId, 'key', parent, 0, true, type.key))
  }
}

function buildIndex (root: IcebergType): SchemaIndex {
  const fields: Entry[] = []
  const stack: Entry[] = []
  let highest = 0
  let irregular = false
  pushChildren(stack, root, undefined)
  while (stack.length > 0) {
    const f = stack.pop() as Entry
    fields.push(f)
    if (f.id > highest) highest = f.id
    if (f.id < 0 || !Number.isInteger(f.id)) irregular = true
    pushChildren(stack, f.type, f)
  }
  return new Index(fields, !irregular && highest <= DENSE_SLACK + 2 * fields.length, highest)
}

/** Children of a type as indexed fields: struct fields, a list element, a map key and value. */
export function childFields (type: IcebergType): IndexedField[] {
  const stack: Entry[] = []
  pushChildren(stack, type, undefined)
  return stack.reverse()
}
