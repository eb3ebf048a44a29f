/**
 * Wire JSON → domain types, once, at the edge (spec Appendix C "JSON serialization").
 *
 * Parsing is strict and never stops at the first problem: every issue is collected with the path
 * where it was found, so one response can name them all. Deep nesting is bounded (an issue, never a
 * stack overflow) and only own properties are read, so `__proto__` keys are inert.
 */
import { isLossless, isObject, own, OwnKeys, toInt, toLongText, type JsonObject } from './json-values.js'
import type {
  IcebergType, NestedField, ParseIssue, PartitionField, PartitionSpec, PrimitiveType, Schema,
  SimplePrimitiveName, SortField, SortOrder, StructType, TableMetadata
} from './types.js'

/** Deepest type nesting accepted; real schemas stay far below it. */
const MAX_TYPE_DEPTH = 200

const SIMPLE_PRIMITIVES: ReadonlySet<string> = new Set<SimplePrimitiveName>([
  'boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz', 'string',
  'uuid', 'binary', 'timestamp_ns', 'timestamptz_ns', 'unknown', 'variant'
])

// Appendix C: "Readers should accept optional whitespace around parameters and separators in
// parameterized type strings": inside the brackets only, as Java's `Types.fromTypeName` reads them
// (`decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)`, matched whole on the lower-cased string). So
// `decimal( 10 , 2 )` is decimal(10, 2), while `decimal (10,2)` and ` long ` are not type strings
// (Java, iceberg-rust and PyIceberg refuse them too).
const DECIMAL = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/i
const FIXED = /^fixed\[\s*(\d+)\s*\]$/i
const GEOMETRY = /^geometry\s*(?:\(\s*([^(),\s][^(),]*?)\s*\))?$/i
const GEOGRAPHY = /^geography\s*(?:\(\s*([^(),\s][^(),]*?)\s*(?:,\s*([A-Za-z_]+)\s*)?\))?$/i

/** Highest decimal precision (spec "Primitive Types": precision must be 38 or less). */
const MAX_DECIMAL_PRECISION = 38

/** Longest fixed type: Java reads the length as an int (Integer.parseInt). */
const MAX_FIXED_LENGTH = 2 ** 31 - 1

/** Parses a primitive type string such as `long`, `decimal(10, 2)`, `fixed[16]`, `geography(OGC:CRS84, karney)`. */
export function parsePrimitiveType (text: string): PrimitiveType | undefined {
  return readPrimitive(text).type
}

// Types are immutable values, so each distinct spelling is parsed once and shared: a wide schema
// repeats a handful of type strings thousands of times.
const PRIMITIVE_CACHE = new Map<string, { type?: PrimitiveType, problem?: string }>()
const PRIMITIVE_CACHE_LIMIT = 4096

function readPrimitive (text: string): { type?: PrimitiveType, problem?: string } {
  const hit = PRIMITIVE_CACHE.get(text)
  if (hit !== undefined) return hit
  const read = readPrimitiveUncached(text)
  if (read.type !== undefined && typeof text === 'string' && PRIMITIVE_CACHE.size < PRIMITIVE_CACHE_LIMIT) PRIMITIVE_CACHE.set(text, Object.freeze(read))
  return read
}

function readPrimitiveUncached (text: string): { type?: PrimitiveType, problem?: string } {
  if (typeof text !== 'string') return { problem: 'not a string' }
  const lower = text.toLowerCase()
  if (SIMPLE_PRIMITIVES.has(lower)) return { type: Object.freeze({ kind: lower as SimplePrimitiveName }) }
  let m = DECIMAL.exec(text)
  if (m) {
    const precision = Number(m[1])
    const scale = Number(m[2])
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION) return { problem: `decimal precision must be 1..${MAX_DECIMAL_PRECISION}, got ${precision}` }
    if (scale > precision) return { problem: `decimal scale ${scale} exceeds precision ${precision}` }
    return { type: { kind: 'decimal', precision, scale } }
  }
  m = FIXED.exec(text)
  if (m) {
    // Any 32-bit length, 0 included: the spec sets no minimum, and Java (FixedType.ofLength),
    // iceberg-go (TestFixedType: "fixed[0]") and iceberg-rust all read fixed[0].
    const length = Number(m[1])
    if (length > MAX_FIXED_LENGTH) return { problem: `fixed length must be at most ${MAX_FIXED_LENGTH}, got ${m[1]}` }
    return { type: { kind: 'fixed', length } }
  }
  m = GEOMETRY.exec(text)
  if (m) return { type: m[1] === undefined ? { kind: 'geometry' } : { kind: 'geometry', crs: m[1] } }
  m = GEOGRAPHY.exec(text)
  if (m) {
    if (m[1] === undefined) return { type: { kind: 'geography' } }
    return { type: m[2] === undefined ? { kind: 'geography', crs: m[1] } : { kind: 'geography', crs: m[1], algorithm: m[2].toLowerCase() } }
  }
  return { problem: 'unknown type' }
}

interface ReadOptions {
  /** Report duplicate field ids and duplicate names within a struct as parse issues. */
  readonly duplicates: boolean
}

/** The keys of a field object: read once for every field of every schema (see OwnKeys). */
const FIELD_KEYS = ['id', 'name', 'required', 'type', 'doc', 'initial-default', 'write-default'] as const

class Reader {
  readonly seenIds = new Set<number>()
  /**
   * Where the reader is: keys and array indexes below `root`. A location is rendered only for an
   * issue, so a schema without problems costs no path strings, however wide or deep it is.
   */
  private readonly trail: Array<string | number> = []
  /**
   * `rendered[k]` is the location of the first k steps, valid for k up to `renderedUpTo`: many
   * issues side by side deep in a schema each extend the shared prefix by a step or two instead
   * of rendering the whole path again.
   */
  private readonly rendered: string[]
  private renderedUpTo = 0
  private readonly fieldKeys = new OwnKeys(FIELD_KEYS)
  constructor (readonly issues: ParseIssue[], readonly opts: ReadOptions, root: string) {
    this.rendered = [root]
  }

  /** Steps down to `step` (a key, or an index of the array at the current location). */
  enter (step: string | number): void {
    this.trail.push(step)
    if (this.renderedUpTo >= this.trail.length) this.renderedUpTo = this.trail.length - 1
  }

  /** Moves to `step` beside the current one (the next index of the same array). */
  move (step: string | number): void {
    this.trail[this.trail.length - 1] = step
    if (this.renderedUpTo >= this.trail.length) this.renderedUpTo = this.trail.length - 1
  }

  leave (): void {
    this.trail.pop()
    if (this.renderedUpTo > this.trail.length) this.renderedUpTo = this.trail.length
  }

  /** The current location, with `key` below it: `schemas[0].fields[3].type.element-id`. */
  private at (key?: string): string {
    let k = this.renderedUpTo
    let at = this.rendered[k] as string
    for (; k < this.trail.length; k++) {
      const step = this.trail[k] as string | number
      at += typeof step === 'number' ? `[${step}]` : `.${step}`
      this.rendered[k + 1] = at
    }
    this.renderedUpTo = this.trail.length
    return key === undefined ? at : `${at}.${key}`
  }

  /** Reports a problem at the current location (or at `key` below it). */
  issue (key: string | undefined, message: string): void {
    this.issues.push({ at: this.at(key), message })
  }

  id (value: unknown, key: string, what: string): number | undefined {
    const id = toInt(value)
    if (id === undefined) {
      this.issue(key, value === undefined ? `Cannot parse ${what}: missing` : `Cannot parse ${what}: not an integer`)
      return undefined
    }
    if (this.opts.duplicates) {
      if (this.seenIds.has(id)) this.issue(key, `Invalid schema: multiple fields for id ${id}`)
      this.seenIds.add(id)
    }
    return id
  }

  bool (value: unknown, key: string, what: string): boolean | undefined {
    if (typeof value === 'boolean') return value
    this.issue(key, value === undefined ? `Cannot parse ${what}: missing` : `Cannot parse ${what}: not a boolean`)
    return undefined
  }

  /** Reads the type found under `key` of the current location. */
  typeAt (key: string, json: unknown, depth: number): IcebergType | undefined {
    this.enter(key)
    const type = this.type(json, depth)
    this.leave()
    return type
  }

  type (json: unknown, depth: number): IcebergType | undefined {
    if (depth > MAX_TYPE_DEPTH) {
      this.issue(undefined, `Cannot parse type: nested deeper than ${MAX_TYPE_DEPTH} levels`)
      return undefined
    }
    if (typeof json === 'string') {
      const { type, problem } = readPrimitive(json)
      if (type === undefined) this.issue(undefined, `Cannot parse type: ${JSON.stringify(json)}: ${problem ?? 'unknown type'}`)
      return type
    }
    if (!isObject(json)) {
      this.issue(undefined, 'Cannot parse type: expected a type string or an object')
      return undefined
    }
    const kind = own(json, 'type')
    if (kind === 'struct') return this.struct(json, depth)
    if (kind === 'list') return this.list(json, depth)
    if (kind === 'map') return this.map(json, depth)
    this.issue('type', kind === undefined ? 'Cannot parse type: missing "type"' : `Cannot parse type: unknown nested type ${JSON.stringify(kind)}`)
    return undefined
  }

  struct (json: JsonObject, depth: number): StructType | undefined {
    const fields = own(json, 'fields')
    if (!Array.isArray(fields)) {
      this.issue('fields', 'Cannot parse struct: "fields" must be an array')
      return undefined
    }
    // Sized once: a struct that fails to parse is dropped whole, so no slot is left empty.
    const out = new Array<NestedField>(fields.length)
    const names = this.opts.duplicates ? new Set<string>() : undefined
    let ok = true
    this.enter('fields')
    this.enter(0)
    for (let i = 0; i < fields.length; i++) {
      this.move(i)
      const f = this.field(fields[i], depth)
      if (f === undefined) { ok = false; continue }
      if (names !== undefined) {
        if (names.has(f.name)) this.issue('name', `Invalid schema: multiple fields named ${f.name} in one struct`)
        names.add(f.name)
      }
      out[i] = f
    }
    this.leave()
    this.leave()
    return ok ? { kind: 'struct', fields: out } : undefined
  }

  /** One struct field; the trail points at it. */
  field (json: unknown, depth: number): NestedField | undefined {
    if (!isObject(json)) {
      this.issue(undefined, 'Cannot parse field: expected an object')
      return undefined
    }
    const src = this.fieldKeys.of(json)
    const rawId = src.id
    const id = toInt(rawId)
    if (id === undefined) {
      this.issue('id', rawId === undefined ? 'Cannot parse field id: missing' : 'Cannot parse field id: not an integer')
    } else if (this.opts.duplicates) {
      if (this.seenIds.has(id)) this.issue('id', `Invalid schema: multiple fields for id ${id}`)
      this.seenIds.add(id)
    }
    const rawName = src.name
    const name = typeof rawName === 'string' && rawName.length > 0 ? rawName : undefined
    if (name === undefined) this.issue('name', rawName === undefined ? 'Cannot parse field name: missing' : 'Cannot parse field name: must be a non-empty string')
    const required = src.required
    if (typeof required !== 'boolean') this.issue('required', required === undefined ? 'Cannot parse field required flag: missing' : 'Cannot parse field required flag: not a boolean')
    const rawType = src.type
    let type: IcebergType | undefined
    if (typeof rawType === 'string') {
      const read = readPrimitive(rawType)
      type = read.type
      if (type === undefined) this.issue('type', `Cannot parse type: ${JSON.stringify(rawType)}: ${read.problem ?? 'unknown type'}`)
    } else if (rawType === undefined) {
      this.issue('type', 'Cannot parse field type: missing')
    } else {
      type = this.typeAt('type', rawType, depth + 1)
    }
    const doc = src.doc
    if (doc !== undefined && doc !== null && typeof doc !== 'string') this.issue('doc', 'Cannot parse field doc: not a string')
    if (id === undefined || name === undefined || typeof required !== 'boolean' || type === undefined) return undefined
    const field: { -readonly [K in keyof NestedField]: NestedField[K] } = { id, name, required, type }
    if (typeof doc === 'string') field.doc = doc
    // A null default is no default (spec "Default values": "if either default is not set ... the
    // default value is null"); Java's SchemaParser fails on a JSON null here instead (it hands null to
    // Expressions.lit), which docs/engines.md lists among the differences.
    if (src['initial-default'] !== undefined && src['initial-default'] !== null) field.initialDefault = src['initial-default']
    if (src['write-default'] !== undefined && src['write-default'] !== null) field.writeDefault = src['write-default']
    return field
  }

  list (json: JsonObject, depth: number): IcebergType | undefined {
    const elementId = this.id(own(json, 'element-id'), 'element-id', 'list element id')
    const elementRequired = this.bool(own(json, 'element-required'), 'element-required', 'list element-required')
    const raw = own(json, 'element')
    const element = raw === undefined
      ? (this.issue('element', 'Cannot parse list: missing "element"'), undefined)
      : this.typeAt('element', raw, depth + 1)
    if (elementId === undefined || elementRequired === undefined || element === undefined) return undefined
    return { kind: 'list', elementId, elementRequired, element }
  }

  map (json: JsonObject, depth: number): IcebergType | undefined {
    const keyId = this.id(own(json, 'key-id'), 'key-id', 'map key id')
    const rawKey = own(json, 'key')
    const key = rawKey === undefined ? (this.issue('key', 'Cannot parse map: missing "key"'), undefined) : this.typeAt('key', rawKey, depth + 1)
    const valueId = this.id(own(json, 'value-id'), 'value-id', 'map value id')
    const valueRequired = this.bool(own(json, 'value-required'), 'value-required', 'map value-required')
    const rawValue = own(json, 'value')
    const value = rawValue === undefined ? (this.issue('value', 'Cannot parse map: missing "value"'), undefined) : this.typeAt('value', rawValue, depth + 1)
    if (keyId === undefined || key === undefined || valueId === undefined || valueRequired === undefined || value === undefined) return undefined
    return { kind: 'map', keyId, key, valueId, valueRequired, value }
  }

  schema (json: unknown): Schema | undefined {
    if (!isObject(json)) {
      this.issue(undefined, 'Cannot parse schema: expected an object')
      return undefined
    }
    const kind = own(json, 'type')
    if (kind !== 'struct') this.issue('type', kind === undefined ? 'Cannot parse schema: missing "type": "struct"' : 'Cannot parse schema: "type" must be "struct"')
    // Optional members read a JSON null as absent, as Java's SchemaParser does (getIntOrNull,
    // getIntegerSetOrNull, getStringOrNull); required ones (fields, id, name, type, required) do not.
    const rawSchemaId = own(json, 'schema-id') ?? undefined
    const schemaId = rawSchemaId === undefined ? undefined : toInt(rawSchemaId)
    if (rawSchemaId !== undefined && schemaId === undefined) this.issue('schema-id', 'Cannot parse schema-id: not an integer')
    const rawIdent = own(json, 'identifier-field-ids')
    const identifierFieldIds: number[] = []
    if (rawIdent !== undefined && rawIdent !== null) {
      if (!Array.isArray(rawIdent)) this.issue('identifier-field-ids', 'Cannot parse identifier-field-ids: not an array')
      else {
        rawIdent.forEach((v, i) => {
          const id = toInt(v)
          if (id === undefined) this.issue(`identifier-field-ids[${i}]`, 'Cannot parse identifier field id: not an integer')
          else identifierFieldIds.push(id)
        })
      }
    }
    const struct = this.struct(json, 0)
    if (struct === undefined || kind !== 'struct') return undefined
    return schemaId === undefined ? { identifierFieldIds, struct } : { schemaId, identifierFieldIds, struct }
  }
}

/** Parses one type (primitive string or struct/list/map object); problems go to `issues`. */
export function parseType (json: unknown, at: string, issues: ParseIssue[]): IcebergType | undefined {
  return new Reader(issues, { duplicates: false }, at).type(json, 0)
}

/**
 * Parses a schema strictly: missing ids, bad type strings, duplicate ids anywhere in the tree and
 * duplicate names within one struct are all reported.
 */
export function parseSchema (json: unknown, at = 'schema'): { schema?: Schema, issues: ParseIssue[] } {
  const issues: ParseIssue[] = []
  const schema = new Reader(issues, { duplicates: true }, at).schema(json)
  return issues.length === 0 && schema !== undefined ? { schema, issues } : { issues }
}

/**
 * Parses a schema's shape only: duplicate ids and names are left in place for the rules
 * (FIELD_ID_UNIQUE, FIELD_NAME_UNIQUE) to report with their own ids.
 */
export function parseSchemaShape (json: unknown, at: string, issues: ParseIssue[]): Schema | undefined {
  const before = issues.length
  const schema = new Reader(issues, { duplicates: false }, at).schema(json)
  return issues.length === before ? schema : undefined
}

function sourceIds (json: JsonObject, at: string, issues: ParseIssue[]): number[] | undefined {
  const many = own(json, 'source-ids')
  if (Array.isArray(many)) {
    const ids = many.map(toInt)
    if (ids.length > 0 && ids.every((x): x is number => x !== undefined)) return ids
    issues.push({ at: `${at}.source-ids`, message: 'Cannot parse source-ids: expected a non-empty array of integers' })
    return undefined
  }
  const one = toInt(own(json, 'source-id'))
  if (one === undefined) {
    issues.push({ at: `${at}.source-id`, message: 'Cannot parse source-id: missing or not an integer' })
    return undefined
  }
  return [one]
}

function text (json: JsonObject, key: string, at: string, issues: ParseIssue[], fallback?: string): string | undefined {
  const v = own(json, key)
  if (typeof v === 'string') return v
  if (v === undefined && fallback !== undefined) return fallback
  issues.push({ at: `${at}.${key}`, message: `Cannot parse ${key}: ${v === undefined ? 'missing' : 'not a string'}` })
  return undefined
}

function partitionFields (json: unknown, at: string, issues: ParseIssue[]): PartitionField[] | undefined {
  if (!Array.isArray(json)) {
    issues.push({ at, message: 'Cannot parse partition fields: not an array' })
    return undefined
  }
  const out: PartitionField[] = []
  json.forEach((f, i) => {
    const fat = `${at}[${i}]`
    if (!isObject(f)) { issues.push({ at: fat, message: 'Cannot parse partition field: expected an object' }); return }
    const ids = sourceIds(f, fat, issues)
    const name = text(f, 'name', fat, issues)
    const transform = text(f, 'transform', fat, issues)
    const rawFieldId = own(f, 'field-id')
    const fieldId = rawFieldId === undefined ? undefined : toInt(rawFieldId)
    if (rawFieldId !== undefined && fieldId === undefined) issues.push({ at: `${fat}.field-id`, message: 'Cannot parse field-id: not an integer' })
    if (ids === undefined || name === undefined || transform === undefined) return
    out.push(fieldId === undefined ? { sourceIds: ids, name, transform } : { sourceIds: ids, fieldId, name, transform })
  })
  return out
}

/** Parses a PartitionSpec; `spec-id` may be absent in an add-spec (the server assigns it). */
export function parsePartitionSpec (json: unknown, at: string, issues: ParseIssue[]): (PartitionSpec & { specIdGiven: boolean }) | undefined {
  if (!isObject(json)) { issues.push({ at, message: 'Cannot parse partition spec: expected an object' }); return undefined }
  const rawId = own(json, 'spec-id')
  const specId = rawId === undefined ? undefined : toInt(rawId)
  if (rawId !== undefined && specId === undefined) issues.push({ at: `${at}.spec-id`, message: 'Cannot parse spec-id: not an integer' })
  const fields = partitionFields(own(json, 'fields'), `${at}.fields`, issues)
  if (fields === undefined) return undefined
  return { specId: specId ?? 0, fields, specIdGiven: specId !== undefined }
}

/** Parses a SortOrder; `order-id` may be absent in an add-sort-order. */
export function parseSortOrder (json: unknown, at: string, issues: ParseIssue[]): (SortOrder & { orderIdGiven: boolean }) | undefined {
  if (!isObject(json)) { issues.push({ at, message: 'Cannot parse sort order: expected an object' }); return undefined }
  const rawId = own(json, 'order-id')
  const orderId = rawId === undefined ? undefined : toInt(rawId)
  if (rawId !== undefined && orderId === undefined) issues.push({ at: `${at}.order-id`, message: 'Cannot parse order-id: not an integer' })
  const raw = own(json, 'fields')
  if (!Array.isArray(raw)) { issues.push({ at: `${at}.fields`, message: 'Cannot parse sort order fields: not an array' }); return undefined }
  const fields: SortField[] = []
  raw.forEach((f, i) => {
    const fat = `${at}.fields[${i}]`
    if (!isObject(f)) { issues.push({ at: fat, message: 'Cannot parse sort field: expected an object' }); return }
    const ids = sourceIds(f, fat, issues)
    const transform = text(f, 'transform', fat, issues)
    const direction = text(f, 'direction', fat, issues)
    const nullOrder = text(f, 'null-order', fat, issues)
    if (ids === undefined || transform === undefined || direction === undefined || nullOrder === undefined) return
    fields.push({ sourceIds: ids, transform, direction, nullOrder })
  })
  return { orderId: orderId ?? 0, fields, orderIdGiven: orderId !== undefined }
}

/** A `Record` without a prototype, so keys such as `__proto__` stay plain data. */
export function plainRecord<V> (): Record<string, V> {
  return Object.create(null) as Record<string, V>
}

function intField (json: JsonObject, key: string, issues: ParseIssue[], required: boolean): number | undefined {
  const v = own(json, key)
  if (v === undefined) {
    if (required) issues.push({ at: key, message: `Cannot parse table metadata: missing ${key}` })
    return undefined
  }
  const n = toInt(v)
  if (n === undefined) issues.push({ at: key, message: `Cannot parse ${key}: not an integer` })
  return n
}

interface TableMetadataOptions {
  /**
   * Schemas already parsed from the exact text of `schemas[i]`, by index (`src/json/read-base.ts`
   * reuses those of a table's previous read): taken as they are, the element itself not read.
   */
  readonly knownSchemas?: ReadonlyMap<number, Schema>
}

/**
 * Parses table metadata (the `metadata` of a LoadTableResult). Format 1 legacy fields (`schema`,
 * `partition-spec`) are read when the lists are absent; refs come from `refs`, and
 * `current-snapshot-id` stands for `main` when `refs` lacks it. Snapshot ids stay decimal strings.
 */
export function parseTableMetadata (json: unknown, options: TableMetadataOptions = {}): { metadata?: TableMetadata, issues: ParseIssue[] } {
  const issues: ParseIssue[] = []
  if (!isObject(json)) return { issues: [{ at: '', message: 'Cannot parse table metadata: expected an object' }] }
  const fv = intField(json, 'format-version', issues, true)
  if (fv !== undefined && fv !== 1 && fv !== 2 && fv !== 3) issues.push({ at: 'format-version', message: `Cannot parse table metadata: unsupported format version ${fv}` })
  const lastColumnId = intField(json, 'last-column-id', issues, true)

  const schemas: Schema[] = []
  let currentSchemaId = intField(json, 'current-schema-id', issues, false)
  const rawSchemas = own(json, 'schemas')
  if (Array.isArray(rawSchemas)) {
    const known = options.knownSchemas
    rawSchemas.forEach((s, i) => {
      const schema = known?.get(i) ?? parseSchemaShape(s, `schemas[${i}]`, issues)
      if (schema === undefined) return
      if (schema.schemaId === undefined) issues.push({ at: `schemas[${i}].schema-id`, message: 'Cannot parse schema: missing schema-id' })
      else schemas.push(schema)
    })
  } else if (own(json, 'schema') !== undefined) {
    const schema = parseSchemaShape(own(json, 'schema'), 'schema', issues)
    if (schema !== undefined) {
      const id = schema.schemaId ?? currentSchemaId ?? 0
      schemas.push({ ...schema, schemaId: id })
      currentSchemaId ??= id
    }
  } else {
    issues.push({ at: 'schemas', message: 'Cannot parse table metadata: missing schemas' })
  }
  if (currentSchemaId === undefined && !issues.some(i => i.at === 'current-schema-id')) {
    if (schemas.length > 0) issues.push({ at: 'current-schema-id', message: 'Cannot parse table metadata: missing current-schema-id' })
  } else if (currentSchemaId !== undefined && schemas.length > 0 && !schemas.some(s => s.schemaId === currentSchemaId)) {
    issues.push({ at: 'current-schema-id', message: `Cannot parse table metadata: current schema ${currentSchemaId} is not among the schemas` })
  }

  const partitionSpecs: PartitionSpec[] = []
  let defaultSpecId = intField(json, 'default-spec-id', issues, false)
  const rawSpecs = own(json, 'partition-specs')
  if (Array.isArray(rawSpecs)) {
    rawSpecs.forEach((s, i) => {
      const spec = parsePartitionSpec(s, `partition-specs[${i}]`, issues)
      if (spec !== undefined) partitionSpecs.push({ specId: spec.specId, fields: spec.fields })
    })
  } else if (own(json, 'partition-spec') !== undefined) {
    const fields = partitionFields(own(json, 'partition-spec'), 'partition-spec', issues)
    if (fields !== undefined) partitionSpecs.push({ specId: defaultSpecId ?? 0, fields })
  }
  if (partitionSpecs.length === 0) partitionSpecs.push({ specId: defaultSpecId ?? 0, fields: [] })
  defaultSpecId ??= partitionSpecs[0]?.specId ?? 0

  const sortOrders: SortOrder[] = []
  const rawOrders = own(json, 'sort-orders')
  if (Array.isArray(rawOrders)) {
    rawOrders.forEach((o, i) => {
      const order = parseSortOrder(o, `sort-orders[${i}]`, issues)
      if (order !== undefined) sortOrders.push({ orderId: order.orderId, fields: order.fields })
    })
  }
  if (sortOrders.length === 0) sortOrders.push({ orderId: 0, fields: [] })
  const defaultSortOrderId = intField(json, 'default-sort-order-id', issues, false) ?? sortOrders[0]?.orderId ?? 0

  const properties = plainRecord<string>()
  const rawProps = own(json, 'properties')
  if (isObject(rawProps)) {
    for (const [k, v] of Object.entries(rawProps)) {
      if (typeof v === 'string') properties[k] = v
      else if (typeof v === 'number' || typeof v === 'boolean' || isLossless(v)) properties[k] = String(v)
      else issues.push({ at: `properties.${k}`, message: 'Cannot parse property: not a string' })
    }
  }

  const refs = plainRecord<string>()
  const refTypes = plainRecord<'branch' | 'tag'>()
  const rawRefs = own(json, 'refs')
  if (isObject(rawRefs)) {
    for (const [name, r] of Object.entries(rawRefs)) {
      const id = isObject(r) ? toLongText(own(r, 'snapshot-id')) : undefined
      if (id === undefined) { issues.push({ at: `refs.${name}.snapshot-id`, message: 'Cannot parse ref: snapshot-id is not an integer' }); continue }
      refs[name] = id
      refTypes[name] = isObject(r) && own(r, 'type') === 'tag' ? 'tag' : 'branch'
    }
  }
  const current = own(json, 'current-snapshot-id')
  if (current !== undefined && current !== null && refs.main === undefined) {
    const id = toLongText(current)
    if (id === undefined) issues.push({ at: 'current-snapshot-id', message: 'Cannot parse current-snapshot-id: not an integer' })
    else if (id !== '-1') { refs.main = id; refTypes.main = 'branch' }
  }

  const uuid = own(json, 'table-uuid')
  const location = own(json, 'location')
  const lastPartitionId = intField(json, 'last-partition-id', issues, false)
  if (issues.length > 0 || fv === undefined || lastColumnId === undefined) return { issues }
  const metadata: TableMetadata = {
    formatVersion: fv as 1 | 2 | 3,
    ...(typeof uuid === 'string' ? { tableUuid: uuid } : {}),
    ...(typeof location === 'string' ? { location } : {}),
    lastColumnId,
    schemas,
    currentSchemaId: currentSchemaId ?? -1,
    partitionSpecs,
    defaultSpecId,
    ...(lastPartitionId === undefined ? {} : { lastPartitionId }),
    sortOrders,
    defaultSortOrderId,
    properties,
    refs,
    refTypes
  }
  return { metadata, issues }
}
