/**
 * Indexes of a schema: fields by id and by full path, parents, highest id.
 *
 * List elements and map keys/values have ids of their own (spec "Nested Types"); they appear here
 * as fields named `element`, `key` and `value` (paths `tags.element`, `m.key`, `m.value.zip`).
 *
 * The index is built for the base and for the proposed schema of every commit, so its layout is
 * chosen for the garbage collector: fields sit in pre-order in one array, and parents, sibling
 * positions and the id → position table are typed arrays, whose contents the collector never
 * scans or copies. An object per field (`IndexedField`) is made only when code asks for one by id
 * or position; whole-schema walks (the diff, the rules) read through the positional accessors
 * (`idAt`, `typeAt`, `parentAt`, …) and allocate nothing. With one object per field, a
 * 100,000-field schema left ~18 MB of young objects per commit, more than V8's young generation
 * holds, and every scavenge copied them: the cost per field at 100,000 fields was twice that at
 * 10,000. The walks are iterative, so a deep or wide schema costs no stack and no quadratic work.
 */
import type { IcebergType, ListType, MapType, NestedField, Schema } from './types.js'

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
  /** First occurrence of each id. */
  readonly byId: ReadonlyMap<number, IndexedField>
  readonly byPath: ReadonlyMap<string, number>
  /** Highest field id in the schema (0 when it has no fields). */
  readonly highestId: number
  /** Every field in pre-order (parents before children, siblings in order); made on first use. */
  readonly fields: readonly IndexedField[]
  /** Ids that occur more than once; `byId` keeps the first occurrence. */
  readonly duplicateIds: readonly number[]
  /** Full paths that occur more than once (e.g. a top-level `a.b` next to struct `a` with `b`). */
  readonly duplicatePaths: readonly string[]

  /** Number of positions: every field in pre-order, repeated ids included. */
  readonly size: number
  /** Position of the first field with this id, or -1. */
  positionOf: (id: number) => number
  idAt: (pos: number) => number
  nameAt: (pos: number) => string
  requiredAt: (pos: number) => boolean
  typeAt: (pos: number) => IcebergType
  /** The struct field at `pos`; undefined for a list element or a map key or value. */
  fieldAt: (pos: number) => NestedField | undefined
  /** Position of the enclosing field, or -1 at the top level. */
  parentAt: (pos: number) => number
  /** Position among its siblings. */
  indexAt: (pos: number) => number
  pathAt: (pos: number) => string
  /** The field at `pos` as an object (the same object on every call). */
  at: (pos: number) => IndexedField
}

/**
 * What sits at a position: the struct field itself, or, for a list element or a map key or value,
 * the list or map type it belongs to (its `Role` says which part), so that no object is made for it.
 */
type Node = NestedField | ListType | MapType

const enum Role { Field = 0, Element = 1, Key = 2, Value = 3 }
const ROLE_NAMES = ['', 'element', 'key', 'value'] as const

/** The id of the part of `node` that `role` names. */
function idOf (node: Node, role: Role): number {
  switch (role) {
    case Role.Field: return (node as NestedField).id
    case Role.Element: return (node as ListType).elementId
    case Role.Key: return (node as MapType).keyId
    default: return (node as MapType).valueId
  }
}

/** The type of the part of `node` that `role` names. */
function typeOf (node: Node, role: Role): IcebergType {
  switch (role) {
    case Role.Field: return (node as NestedField).type
    case Role.Element: return (node as ListType).element
    case Role.Key: return (node as MapType).key
    default: return (node as MapType).value
  }
}

/** Ids up to twice the field count plus this many index an array (unused slots are cheap). */
const DENSE_SLACK = 1024

/** A field of an index, as an object: reads through to the index's arrays. */
class FieldView implements IndexedField {
  constructor (private readonly ix: Index, private readonly pos: number) {}
  get id (): number { return this.ix.idAt(this.pos) }
  get name (): string { return this.ix.nameAt(this.pos) }
  get path (): string { return this.ix.pathAt(this.pos) }
  get parentId (): number | undefined {
    const p = this.ix.parentAt(this.pos)
    return p < 0 ? undefined : this.ix.idAt(p)
  }

  get index (): number { return this.ix.indexAt(this.pos) }
  get required (): boolean { return this.ix.requiredAt(this.pos) }
  get type (): IcebergType { return this.ix.typeAt(this.pos) }
  get field (): NestedField | undefined { return this.ix.fieldAt(this.pos) }
}

/** `byId` as a read-only Map; iteration (rare: reports, history checks) builds a real Map once. */
class FieldsById implements ReadonlyMap<number, IndexedField> {
  private asMap: Map<number, IndexedField> | undefined = undefined
  constructor (private readonly ix: Index) {}

  get size (): number { return this.ix.size - this.ix.duplicateIds.length }

  get (id: number): IndexedField | undefined {
    const pos = this.ix.positionOf(id)
    return pos < 0 ? undefined : this.ix.at(pos)
  }

  has (id: number): boolean {
    return this.ix.positionOf(id) >= 0
  }

  private map (): Map<number, IndexedField> {
    if (this.asMap === undefined) {
      const m = new Map<number, IndexedField>()
      for (let pos = 0; pos < this.ix.size; pos++) {
        const id = this.ix.idAt(pos)
        if (this.ix.positionOf(id) === pos) m.set(id, this.ix.at(pos))
      }
      this.asMap = m
    }
    return this.asMap
  }

  forEach (fn: (value: IndexedField, key: number, map: ReadonlyMap<number, IndexedField>) => void, thisArg?: unknown): void {
    this.map().forEach((v, k) => fn.call(thisArg, v, k, this))
  }

  entries (): MapIterator<[number, IndexedField]> { return this.map().entries() }
  keys (): MapIterator<number> { return this.map().keys() }
  values (): MapIterator<IndexedField> { return this.map().values() }
  [Symbol.iterator] (): MapIterator<[number, IndexedField]> { return this.map().entries() }
}

class Index implements SchemaIndex {
  readonly byId: FieldsById
  readonly duplicateIds: number[] = []
  /** Id → position + 1 (0: absent) when ids are dense; otherwise `sparse`. */
  private readonly slots: Int32Array | undefined
  private readonly sparse: Map<number, number> | undefined
  // By position, made on demand: a commit asks for a handful (the changed fields), so a Map
  // costs less than an array as long as the schema.
  private readonly views = new Map<number, FieldView>()
  private readonly paths = new Map<number, string>()
  private all: IndexedField[] | undefined = undefined
  private pathMap: Map<string, number> | undefined = undefined
  private pathDuplicates: string[] = []

  constructor (
    private readonly nodes: readonly Node[],
    /** Role of each position: a struct field, or a list's element, or a map's key or value. */
    private readonly roles: Uint8Array,
    private readonly parents: Int32Array,
    private readonly positions: Int32Array,
    readonly highestId: number,
    dense: boolean
  ) {
    const n = nodes.length
    if (dense) {
      const slots = new Int32Array(highestId + 1)
      for (let pos = 0; pos < n; pos++) {
        const id = this.idAt(pos)
        if (slots[id] === 0) slots[id] = pos + 1
        else this.duplicateIds.push(id)
      }
      this.slots = slots
    } else {
      const sparse = new Map<number, number>()
      for (let pos = 0; pos < n; pos++) {
        const id = this.idAt(pos)
        if (sparse.has(id)) this.duplicateIds.push(id)
        else sparse.set(id, pos)
      }
      this.sparse = sparse
    }
    this.byId = new FieldsById(this)
  }

  get size (): number { return this.nodes.length }

  positionOf (id: number): number {
    const slots = this.slots
    if (slots === undefined) return this.sparse?.get(id) ?? -1
    // `(id | 0) === id`: an integer (1.5 or NaN is no key of a typed array).
    return id >= 0 && id < slots.length && (id | 0) === id ? (slots[id] as number) - 1 : -1
  }

  idAt (pos: number): number {
    return idOf(this.nodes[pos] as Node, this.roles[pos] as Role)
  }

  nameAt (pos: number): string {
    const role = this.roles[pos] as Role
    return role === Role.Field ? (this.nodes[pos] as NestedField).name : ROLE_NAMES[role]
  }

  requiredAt (pos: number): boolean {
    const node = this.nodes[pos] as Node
    switch (this.roles[pos]) {
      case Role.Field: return (node as NestedField).required
      case Role.Element: return (node as ListType).elementRequired
      case Role.Key: return true
      default: return (node as MapType).valueRequired
    }
  }

  typeAt (pos: number): IcebergType {
    return typeOf(this.nodes[pos] as Node, this.roles[pos] as Role)
  }

  fieldAt (pos: number): NestedField | undefined {
    return this.roles[pos] === Role.Field ? this.nodes[pos] as NestedField : undefined
  }

  parentAt (pos: number): number { return this.parents[pos] as number }
  indexAt (pos: number): number { return this.positions[pos] as number }

  pathAt (pos: number): string {
    const paths = this.paths
    const known = paths.get(pos)
    if (known !== undefined) return known
    // Climb to the nearest ancestor whose path is known, then fill in downwards.
    const chain: number[] = []
    let p = pos
    while (p >= 0 && !paths.has(p)) { chain.push(p); p = this.parents[p] as number }
    let prefix = p >= 0 ? paths.get(p) : undefined
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i] as number
      const name = this.nameAt(c)
      prefix = prefix === undefined ? name : prefix + '.' + name
      paths.set(c, prefix)
    }
    return prefix as string
  }

  at (pos: number): IndexedField {
    let view = this.views.get(pos)
    if (view === undefined) {
      view = new FieldView(this, pos)
      this.views.set(pos, view)
    }
    return view
  }

  get fields (): readonly IndexedField[] {
    if (this.all === undefined) {
      const all = new Array<IndexedField>(this.nodes.length)
      for (let pos = 0; pos < all.length; pos++) all[pos] = this.at(pos)
      this.all = all
    }
    return this.all
  }

  get byPath (): ReadonlyMap<string, number> {
    if (this.pathMap === undefined) {
      const paths = new Map<string, number>()
      for (let pos = 0; pos < this.nodes.length; pos++) {
        const p = this.pathAt(pos)
        if (paths.has(p)) this.pathDuplicates.push(p)
        else paths.set(p, this.idAt(pos))
      }
      this.pathMap = paths
    }
    return this.pathMap
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

/** A typed array twice as long, holding `from`'s contents. */
function grown<T extends Uint8Array | Int32Array> (from: T): T {
  const to = new (from.constructor as new (n: number) => T)(from.length * 2)
  to.set(from)
  return to
}

function buildIndex (root: IcebergType): SchemaIndex {
  // One walk: the typed arrays grow by doubling (a copy is a memcpy), so the tree is not walked
  // a second time just to count it; at 100,000 fields that walk cost more than the copies.
  const nodes: Node[] = []
  let roles = new Uint8Array(64)
  let parents = new Int32Array(64)
  let positions = new Int32Array(64)
  let highest = 0
  let irregular = false
  // Pre-order: a node's children are pushed in reverse, so they pop in order. Parallel stacks
  // (node, role, parent position, sibling position) instead of an object per pending field.
  const stackNodes: Node[] = []
  const stackRoles: Role[] = []
  const stackParents: number[] = []
  const stackIndexes: number[] = []
  const pushOne = (node: Node, role: Role, parent: number, index: number): void => {
    stackNodes.push(node)
    stackRoles.push(role)
    stackParents.push(parent)
    stackIndexes.push(index)
  }
  const pushChildren = (type: IcebergType, parent: number): void => {
    switch (type.kind) {
      case 'struct':
        for (let i = type.fields.length - 1; i >= 0; i--) pushOne(type.fields[i] as NestedField, Role.Field, parent, i)
        return
      case 'list':
        pushOne(type, Role.Element, parent, 0)
        return
      case 'map':
        pushOne(type, Role.Value, parent, 1)
        pushOne(type, Role.Key, parent, 0)
    }
  }
  pushChildren(root, -1)
  let pos = 0
  while (stackNodes.length > 0) {
    const node = stackNodes.pop() as Node
    const role = stackRoles.pop() as Role
    if (pos === roles.length) {
      roles = grown(roles)
      parents = grown(parents)
      positions = grown(positions)
    }
    nodes.push(node)
    roles[pos] = role
    parents[pos] = stackParents.pop() as number
    positions[pos] = stackIndexes.pop() as number
    const id = idOf(node, role)
    if (id > highest) highest = id
    if (id < 0 || !Number.isInteger(id)) irregular = true
    pushChildren(typeOf(node, role), pos)
    pos++
  }
  return new Index(nodes, roles, parents, positions, highest, !irregular && highest <= DENSE_SLACK + 2 * pos)
}
