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
  /** Every field in pre-order (parents before children, siblings in order). */
  readonly fields: readonly IndexedField[]
  /** Ids that occur more than once; `byId` keeps the first occurrence. */
  readonly duplicateIds: readonly number[]
  /** Full paths that occur more than once (e.g. a top-level `a.b` next to struct `a` with `b`). */
  readonly duplicatePaths: readonly string[]
}

class Entry implements IndexedField {
  readonly parentId: number | undefined
  private fullPath: string | undefined = undefined
  constructor (
    readonly id: number,
    readonly name: string,
    readonly parent: Entry | undefined,
    readonly index: number,
    readonly required: boolean,
    readonly type: IcebergType,
    readonly field: NestedField | undefined
  ) {
    this.parentId = parent?.id
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

class Index implements SchemaIndex {
  readonly byId = new Map<number, Entry>()
  readonly fields: Entry[] = []
  readonly duplicateIds: number[] = []
  highestId = 0
  private paths: Map<string, number> | undefined = undefined
  private pathDuplicates: string[] = []

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
      for (let i = type.fields.length - 1; i >= 0; i--) {
        const f = type.fields[i] as NestedField
        stack.push(new Entry(f.id, f.name, parent, i, f.required, f.type, f))
      }
      return
    case 'list':
      stack.push(new Entry(type.elementId, 'element', parent, 0, type.elementRequired, type.element, undefined))
      return
    case 'map':
      stack.push(new Entry(type.valueId, 'value', parent, 1, type.valueRequired, type.value, undefined))
      stack.push(new Entry(type.keyId, 'key', parent, 0, true, type.key, undefined))
  }
}

function buildIndex (root: IcebergType): SchemaIndex {
  const index = new Index()
  const stack: Entry[] = []
  pushChildren(stack, root, undefined)
  while (stack.length > 0) {
    const f = stack.pop() as Entry
    index.fields.push(f)
    if (index.byId.has(f.id)) index.duplicateIds.push(f.id)
    else index.byId.set(f.id, f)
    if (f.id > index.highestId) index.highestId = f.id
    pushChildren(stack, f.type, f)
  }
  return index
}

/** Children of a type as indexed fields: struct fields, a list element, a map key and value. */
export function childFields (type: IcebergType): IndexedField[] {
  const stack: Entry[] = []
  pushChildren(stack, type, undefined)
  return stack.reverse()
}
