/**
 * Types as a person writes them in a schema change: a primitive spelling (`long`, `decimal(10, 2)`),
 * the contract type language for nested types (`list<string>`, `struct<a: int not null, b: string>`,
 * `map<string, long>`), or the spec's JSON form whose ids are placeholders (or missing). The ids given
 * never matter: every new field gets a fresh id when it is added.
 */
import { isObject } from '../iceberg/json-values.js'
import { parsePrimitiveType, parseSchemaShape, parseType } from '../iceberg/parse.js'
import { typeToJson } from '../iceberg/print.js'
import type { IcebergType, NestedField, ParseIssue, Schema } from '../iceberg/types.js'
import { contractTypeToString, parseContractType, type ContractType } from '../contract/contract-type.js'

const MAX_DEPTH = 200

/** Reads a type; `problem` says what is wrong when it cannot. */
export function readTypeInput (input: unknown): { type?: IcebergType, problem?: string } {
  if (typeof input === 'string') {
    // A person's spelling may carry spaces around it; wire type strings may not (parse.ts).
    const primitive = parsePrimitiveType(input.trim())
    if (primitive !== undefined) return { type: primitive }
    try {
      return contractToType(parseContractType(input))
    } catch (err) {
      return { problem: (err as Error).message }
    }
  }
  if (!isObject(input)) return { problem: 'a type is a string such as "long" or "list<string>", or a struct/list/map object' }
  const issues: ParseIssue[] = []
  const filled = withPlaceholders(input, 0)
  if (filled === undefined) return { problem: `nested deeper than ${MAX_DEPTH} levels` }
  const type = parseType(filled, 'type', issues)
  if (type === undefined) return { problem: describe(issues) }
  return { type }
}

/** Reads a whole schema given by a person (union-by-name): ids optional and ignored. */
export function readSchemaInput (input: unknown): { schema?: Schema, problem?: string } {
  if (!isObject(input)) return { problem: 'expected a schema object {"type": "struct", "fields": [...]}' }
  const filled = withPlaceholders({ type: 'struct', ...input }, 0)
  if (filled === undefined) return { problem: `nested deeper than ${MAX_DEPTH} levels` }
  const issues: ParseIssue[] = []
  const schema = parseSchemaShape(filled, 'schema', issues)
  if (schema === undefined) return { problem: describe(issues) }
  return { schema }
}

/** The contract language's type as an Iceberg type; nullability not stated means optional. */
export function contractToType (t: ContractType): { type?: IcebergType, problem?: string } {
  switch (t.kind) {
    case 'primitive': return { type: t.type }
    case 'list': {
      if (t.element === undefined) return { problem: 'a bare "list" names no element type; write list<T>' }
      const element = contractToType(t.element)
      return element.type === undefined ? element : { type: { kind: 'list', elementId: 0, elementRequired: false, element: element.type } }
    }
    case 'map': {
      if (t.key === undefined || t.value === undefined) return { problem: 'a bare "map" names no key and value types; write map<K, V>' }
      const key = contractToType(t.key)
      if (key.type === undefined) return key
      const value = contractToType(t.value)
      return value.type === undefined ? value : { type: { kind: 'map', keyId: 0, key: key.type, valueId: 0, valueRequired: false, value: value.type } }
    }
    case 'struct': {
      if (t.fields === undefined) return { problem: 'a bare "struct" names no fields; write struct<name: type, ...>' }
      const fields: NestedField[] = []
      for (const f of t.fields) {
        const inner = contractToType(f.type)
        if (inner.type === undefined) return { problem: `${f.name}: ${inner.problem ?? contractTypeToString(f.type)}` }
        fields.push({ id: 0, name: f.name, required: f.required === true, type: inner.type })
      }
      return { type: { kind: 'struct', fields } }
    }
  }
}

function describe (issues: readonly ParseIssue[]): string {
  const first = issues[0]
  if (first === undefined) return 'unreadable type'
  return `${first.at}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`
}

/** A copy of a JSON type with missing ids set to 0 and missing required flags to false (optional). */
function withPlaceholders (json: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return undefined
  if (!isObject(json)) return json
  const out: Record<string, unknown> = { ...json }
  let failed = false
  const nested = (v: unknown): unknown => {
    // A nested type may use the short language too: "list<string>" inside a JSON struct.
    if (typeof v === 'string' && parsePrimitiveType(v) === undefined) {
      try {
        const inner = contractToType(parseContractType(v)).type
        if (inner !== undefined) return typeToJson(inner)
      } catch {
        // Left as it is: parseType reports the unknown type with its path.
      }
      return v
    }
    const r = withPlaceholders(v, depth + 1)
    if (r === undefined && v !== undefined) failed = true
    return r
  }
  if (out.type === 'struct' && Array.isArray(out.fields)) {
    out.fields = out.fields.map(f => {
      if (!isObject(f)) return f
      const field: Record<string, unknown> = { ...f }
      if (field.id === undefined) field.id = 0
      if (field.required === undefined) field.required = false
      if (field.type !== undefined) field.type = nested(field.type)
      return field
    })
  } else if (out.type === 'list') {
    if (out['element-id'] === undefined) out['element-id'] = 0
    if (out['element-required'] === undefined) out['element-required'] = false
    if (out.element !== undefined) out.element = nested(out.element)
  } else if (out.type === 'map') {
    if (out['key-id'] === undefined) out['key-id'] = 0
    if (out['value-id'] === undefined) out['value-id'] = 0
    if (out['value-required'] === undefined) out['value-required'] = false
    if (out.key !== undefined) out.key = nested(out.key)
    if (out.value !== undefined) out.value = nested(out.value)
  }
  return failed ? undefined : out
}
