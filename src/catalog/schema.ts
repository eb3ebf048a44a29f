import { badRequest } from './errors.js'
import { defineOwn, isObject, jsonEqual, type JsonObject } from './json.js'

/**
 * Schema JSON (spec Appendix C) checked for shape and written back in the canonical form Java
 * writes. Only well-formedness is checked here: evolution rules (promotions, id reuse, required
 * fields) are the gate's job, and a real catalog accepts them, so this one does too.
 */

const SIMPLE = new Set([
  'boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz', 'string',
  'uuid', 'binary', 'timestamp_ns', 'timestamptz_ns', 'unknown', 'variant'
])
const DECIMAL = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/
const FIXED = /^fixed\[\s*(\d+)\s*\]$/
const GEO = /^(geometry|geography)\s*(\(.*\))?$/

function primitive (raw: string, at: string): string {
  const s = raw.trim()
  const lower = s.toLowerCase()
  if (SIMPLE.has(lower)) return lower
  let m = DECIMAL.exec(lower)
  if (m) {
    const precision = Number(m[1])
    if (precision > 38) throw badRequest(`Invalid schema: ${at}: decimal precision ${precision} is above 38`)
    // Java DecimalType.toString spelling.
    return `decimal(${precision}, ${Number(m[2])})`
  }
  m = FIXED.exec(lower)
  if (m) return `fixed[${Number(m[1])}]`
  // Geometry/geography parameters (CRS names) are case-sensitive: keep them as sent.
  if (GEO.test(lower)) return s
  throw badRequest(`Invalid schema: ${at}: unknown type ${JSON.stringify(raw)}`)
}

function int (v: unknown, at: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`Invalid schema: ${at} must be an integer`)
  return v
}

function bool (v: unknown, at: string): boolean {
  if (typeof v !== 'boolean') throw badRequest(`Invalid schema: ${at} must be a boolean`)
  return v
}

function normalizeType (t: unknown, at: string): unknown {
  if (typeof t === 'string') return primitive(t, at)
  if (!isObject(t)) throw badRequest(`Invalid schema: ${at}: type must be a string or an object`)
  switch (t.type) {
    case 'struct': return normalizeStruct(t, at)
    case 'list':
      return {
        type: 'list',
        'element-id': int(t['element-id'], `${at}.element-id`),
        element: normalizeType(t.element, `${at}.element`),
        'element-required': bool(t['element-required'], `${at}.element-required`)
      }
    case 'map':
      return {
        type: 'map',
        'key-id': int(t['key-id'], `${at}.key-id`),
        key: normalizeType(t.key, `${at}.key`),
        'value-id': int(t['value-id'], `${at}.value-id`),
        value: normalizeType(t.value, `${at}.value`),
        'value-required': bool(t['value-required'], `${at}.value-required`)
      }
    case 'variant': return 'variant'
    default: throw badRequest(`Invalid schema: ${at}: unknown type ${JSON.stringify(t.type)}`)
  }
}

function normalizeField (f: unknown, at: string): JsonObject {
  if (!isObject(f)) throw badRequest(`Invalid schema: ${at} must be an object`)
  if (typeof f.name !== 'string') throw badRequest(`Invalid schema: ${at}.name must be a string`)
  const out: JsonObject = {
    id: int(f.id, `${at}.id`),
    name: f.name,
    required: bool(f.required, `${at}.required`),
    type: normalizeType(f.type, `${at}.type`)
  }
  if (f.doc !== undefined && f.doc !== null) {
    if (typeof f.doc !== 'string') throw badRequest(`Invalid schema: ${at}.doc must be a string`)
    out.doc = f.doc
  }
  if (f['initial-default'] !== undefined) out['initial-default'] = f['initial-default']
  if (f['write-default'] !== undefined) out['write-default'] = f['write-default']
  return out
}

function normalizeStruct (t: JsonObject, at: string): JsonObject {
  if (!Array.isArray(t.fields)) throw badRequest(`Invalid schema: ${at}.fields must be an array`)
  return { type: 'struct', fields: t.fields.map((f, i) => normalizeField(f, `${at}.fields[${i}]`)) }
}

/** Checks a schema's shape; returns it in canonical form with the given schema id. */
export function normalizeSchema (raw: unknown, schemaId: number, at = 'schema'): JsonObject {
  if (!isObject(raw) || raw.type !== 'struct') throw badRequest(`Invalid schema: ${at} must be a struct`)
  const { fields } = normalizeStruct(raw, at)
  const ids = raw['identifier-field-ids'] ?? []
  if (!Array.isArray(ids)) throw badRequest(`Invalid schema: ${at}.identifier-field-ids must be an array`)
  const out: JsonObject = { type: 'struct', 'schema-id': schemaId }
  // Java SchemaParser writes identifier-field-ids only when there are some.
  if (ids.length > 0) out['identifier-field-ids'] = ids.map((id, i) => int(id, `${at}.identifier-field-ids[${i}]`))
  out.fields = fields
  return out
}

/** Java `Schema.sameSchema`: same fields in order (ids, names, required, doc, types, defaults) and identifier ids. */
export function sameSchema (a: JsonObject, b: JsonObject): boolean {
  const idsA = new Set((a['identifier-field-ids'] as number[] | undefined) ?? [])
  const idsB = new Set((b['identifier-field-ids'] as number[] | undefined) ?? [])
  return jsonEqual(a.fields, b.fields) && idsA.size === idsB.size && [...idsA].every(id => idsB.has(id))
}

function walkIds (t: unknown, visit: (id: number) => void): void {
  if (!isObject(t)) return
  if (t.type === 'struct') {
    for (const f of t.fields as JsonObject[]) {
      visit(f.id as number)
      walkIds(f.type, visit)
    }
  } else if (t.type === 'list') {
    visit(t['element-id'] as number)
    walkIds(t.element, visit)
  } else if (t.type === 'map') {
    visit(t['key-id'] as number)
    visit(t['value-id'] as number)
    walkIds(t.key, visit)
    walkIds(t.value, visit)
  }
}

/** Highest field id anywhere in the schema (struct fields, list elements, map keys and values). */
export function highestFieldId (schema: JsonObject): number {
  let max = 0
  walkIds(schema, id => { if (id > max) max = id })
  return max
}

/** Full dotted name of every field id, as Java `Schema.findColumnName` gives it. */
export function namesById (schema: JsonObject): Map<number, string> {
  const out = new Map<number, string>()
  const walk = (t: unknown, prefix: string): void => {
    if (!isObject(t)) return
    if (t.type === 'struct') {
      for (const f of t.fields as JsonObject[]) {
        const name = prefix + (f.name as string)
        out.set(f.id as number, name)
        walk(f.type, `${name}.`)
      }
    } else if (t.type === 'list') {
      out.set(t['element-id'] as number, `${prefix}element`)
      walk(t.element, `${prefix}element.`)
    } else if (t.type === 'map') {
      out.set(t['key-id'] as number, `${prefix}key`)
      out.set(t['value-id'] as number, `${prefix}value`)
      walk(t.key, `${prefix}key.`)
      walk(t.value, `${prefix}value.`)
    }
  }
  walk(schema, '')
  return out
}

/**
 * Java `TypeUtil.assignFreshIds` as `TableMetadata.newTableMetadata` uses it: ids restart at 1,
 * a struct's own fields are numbered before their children are visited. Returns the new schema
 * and the old → new id map (used to rebind partition and sort sources and identifier fields).
 */
export function assignFreshIds (schema: JsonObject): { schema: JsonObject, ids: Map<number, number> } {
  let next = 0
  const ids = new Map<number, number>()
  const fresh = (old: number): number => {
    ids.set(old, ++next)
    return next
  }
  const visit = (t: unknown): unknown => {
    if (!isObject(t)) return t
    if (t.type === 'struct') {
      const fields: JsonObject[] = (t.fields as JsonObject[]).map(f => ({ ...f, id: fresh(f.id as number) }))
      fields.forEach(f => { f.type = visit(f.type) })
      return { type: 'struct', fields }
    }
    if (t.type === 'list') {
      const elementId = fresh(t['element-id'] as number)
      return { ...t, 'element-id': elementId, element: visit(t.element) }
    }
    if (t.type === 'map') {
      const keyId = fresh(t['key-id'] as number)
      const valueId = fresh(t['value-id'] as number)
      return { ...t, 'key-id': keyId, 'value-id': valueId, key: visit(t.key), value: visit(t.value) }
    }
    return t
  }
  const struct = visit(schema) as JsonObject
  const out: JsonObject = { type: 'struct', 'schema-id': 0 }
  const oldIdentifiers = (schema['identifier-field-ids'] as number[] | undefined) ?? []
  if (oldIdentifiers.length > 0) {
    out['identifier-field-ids'] = oldIdentifiers.map(id => {
      const mapped = ids.get(id)
      if (mapped === undefined) throw badRequest(`Invalid schema: identifier field id ${id} is not a field of the schema`)
      return mapped
    })
  }
  out.fields = struct.fields
  return { schema: out, ids }
}

/** A string → string map (table or namespace properties) with a null prototype, so `__proto__` is just a key. */
export function stringMap (raw: unknown, what: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null)
  if (raw === undefined || raw === null) return out
  if (!isObject(raw)) throw badRequest(`Invalid ${what}: must be an object of strings`)
  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (typeof value !== 'string') throw badRequest(`Invalid ${what}: value of ${JSON.stringify(key)} must be a string`)
    defineOwn(out, key, value)
  }
  return out
}

export function stringList (raw: unknown, what: string): string[] {
  if (!Array.isArray(raw) || !raw.every(s => typeof s === 'string')) throw badRequest(`Invalid ${what}: must be an array of strings`)
  return raw as string[]
}
