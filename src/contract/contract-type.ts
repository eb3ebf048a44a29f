/**
 * The type language of schema contracts: the spec's type names (case-insensitive, `integer` for
 * `int`), `decimal(P, S)`, `fixed[N]`, and `list<…>`, `map<…, …>`, `struct<name: type, …>` for
 * nested types. Bare `struct`, `list` and `map` check only the kind.
 *
 * Comparison is structural (spec "Schemas and Data Types"): field ids, field order and nested docs
 * do not matter; a type that the column could only reach by promotion is still a different type.
 */
import type { IcebergType, PrimitiveType, SimplePrimitiveName } from '../iceberg/types.js'

export type ContractType =
  | { readonly kind: 'primitive', readonly type: PrimitiveType }
  | { readonly kind: 'struct', readonly fields?: readonly ContractStructField[] }
  | { readonly kind: 'list', readonly element?: ContractType }
  | { readonly kind: 'map', readonly key?: ContractType, readonly value?: ContractType }

export interface ContractStructField {
  readonly name: string
  readonly type: ContractType
  /** `not null` after the type; undefined means nullability is not checked. */
  readonly required?: boolean
}

const SIMPLE: Record<string, SimplePrimitiveName> = {
  boolean: 'boolean',
  int: 'int',
  integer: 'int',
  long: 'long',
  float: 'float',
  double: 'double',
  date: 'date',
  time: 'time',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz',
  string: 'string',
  uuid: 'uuid',
  binary: 'binary',
  timestamp_ns: 'timestamp_ns',
  timestamptz_ns: 'timestamptz_ns',
  unknown: 'unknown',
  variant: 'variant'
}

/** Types the spec adds in format version 3 (spec "Primitive Types", Appendix E). */
const V3_KINDS = new Set(['timestamp_ns', 'timestamptz_ns', 'unknown', 'variant', 'geometry', 'geography'])

/** Parses a contract type; throws an Error whose message says what is wrong. */
export function parseContractType (text: string): ContractType {
  const p = new TypeParser(text)
  const t = p.type()
  p.skipSpace()
  if (!p.done()) throw new Error(`Cannot parse type "${text}": unexpected "${text.slice(p.pos)}"`)
  return t
}

class TypeParser {
  pos = 0
  constructor (readonly text: string) {}
  done (): boolean { return this.pos >= this.text.length }
  skipSpace (): void { while (!this.done() && /\s/.test(this.text[this.pos] ?? '')) this.pos++ }
  fail (what: string): never { throw new Error(`Cannot parse type "${this.text}": ${what} at position ${this.pos + 1}`) }
  expect (ch: string): void {
    this.skipSpace()
    if (this.text[this.pos] !== ch) this.fail(`expected "${ch}"`)
    this.pos++
  }

  word (): string {
    this.skipSpace()
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.pos))
    if (!m) this.fail('expected a type name')
    this.pos += m[0].length
    return m[0]
  }

  int (): number {
    this.skipSpace()
    const m = /^\d+/.exec(this.text.slice(this.pos))
    if (!m) this.fail('expected a number')
    this.pos += m[0].length
    return Number(m[0])
  }

  peek (): string | undefined { this.skipSpace(); return this.text[this.pos] }

  type (): ContractType {
    const name = this.word().toLowerCase()
    if (name === 'decimal') {
      this.expect('(')
      const precision = this.int()
      this.expect(',')
      const scale = this.int()
      this.expect(')')
      // Spec "Primitive Types": decimal(P,S) with precision at most 38 and scale at most the precision.
      if (precision < 1 || precision > 38) throw new Error(`Invalid type "${this.text}": decimal precision must be between 1 and 38`)
      if (scale > precision) throw new Error(`Invalid type "${this.text}": decimal scale must be between 0 and the precision (${precision})`)
      return { kind: 'primitive', type: { kind: 'decimal', precision, scale } }
    }
    if (name === 'fixed') {
      this.expect('[')
      const length = this.int()
      this.expect(']')
      if (length < 1) throw new Error(`Invalid type "${this.text}": fixed length must be at least 1`)
      return { kind: 'primitive', type: { kind: 'fixed', length } }
    }
    if (name === 'geometry' || name === 'geography') {
      if (this.peek() === '(') {
        const end = this.text.indexOf(')', this.pos)
        if (end < 0) this.fail('expected ")"')
        const params = this.text.slice(this.pos + 1, end).split(',').map(s => s.trim())
        this.pos = end + 1
        if (name === 'geometry') return { kind: 'primitive', type: { kind: 'geometry', crs: params[0] } }
        return { kind: 'primitive', type: { kind: 'geography', crs: params[0], algorithm: params[1] } }
      }
      return { kind: 'primitive', type: { kind: name } }
    }
    if (name === 'list') {
      if (this.peek() !== '<') return { kind: 'list' }
      this.expect('<')
      const element = this.type()
      this.expect('>')
      return { kind: 'list', element }
    }
    if (name === 'map') {
      if (this.peek() !== '<') return { kind: 'map' }
      this.expect('<')
      const key = this.type()
      this.expect(',')
      const value = this.type()
      this.expect('>')
      return { kind: 'map', key, value }
    }
    if (name === 'struct') {
      if (this.peek() !== '<') return { kind: 'struct' }
      this.expect('<')
      const fields: ContractStructField[] = []
      while (this.peek() !== '>') {
        if (fields.length > 0) this.expect(',')
        const fieldName = this.word()
        this.expect(':')
        const type = this.type()
        let required: boolean | undefined
        const rest = this.text.slice(this.pos)
        const nn = /^\s*not\s+null\b/i.exec(rest)
        if (nn) { required = true; this.pos += nn[0].length }
        if (fields.some(f => f.name === fieldName)) throw new Error(`Invalid type "${this.text}": duplicate struct field "${fieldName}"`)
        fields.push(required === undefined ? { name: fieldName, type } : { name: fieldName, type, required })
        if (this.done()) this.fail('expected ">"')
      }
      this.expect('>')
      return { kind: 'struct', fields }
    }
    const simple = SIMPLE[name]
    if (!simple) this.fail(`unknown type "${name}"`)
    return { kind: 'primitive', type: { kind: simple } }
  }
}

/** True when the contract type, or a type nested in it, exists only in format version 3. */
export function needsV3 (t: ContractType): boolean {
  switch (t.kind) {
    case 'primitive': return V3_KINDS.has(t.type.kind)
    case 'list': return t.element !== undefined && needsV3(t.element)
    case 'map': return (t.key !== undefined && needsV3(t.key)) || (t.value !== undefined && needsV3(t.value))
    case 'struct': return (t.fields ?? []).some(f => needsV3(f.type))
  }
}

/** Structural match: ids, field order and docs are ignored; nullability only where the contract states it. */
export function matchesContractType (expected: ContractType, actual: IcebergType): boolean {
  switch (expected.kind) {
    case 'primitive': return samePrimitive(expected.type, actual)
    case 'list':
      return actual.kind === 'list' && (expected.element === undefined || matchesContractType(expected.element, actual.element))
    case 'map':
      return actual.kind === 'map' &&
        (expected.key === undefined || matchesContractType(expected.key, actual.key)) &&
        (expected.value === undefined || matchesContractType(expected.value, actual.value))
    case 'struct': {
      if (actual.kind !== 'struct') return false
      if (expected.fields === undefined) return true
      if (expected.fields.length !== actual.fields.length) return false
      return expected.fields.every(ef => {
        const af = actual.fields.find(f => f.name === ef.name)
        return af !== undefined && matchesContractType(ef.type, af.type) && (ef.required === undefined || ef.required === af.required)
      })
    }
  }
}

function samePrimitive (e: PrimitiveType, a: IcebergType): boolean {
  if (e.kind !== a.kind) return false
  if (e.kind === 'decimal' && a.kind === 'decimal') return e.precision === a.precision && e.scale === a.scale
  if (e.kind === 'fixed' && a.kind === 'fixed') return e.length === a.length
  if (e.kind === 'geometry' && a.kind === 'geometry') return e.crs === undefined || (e.crs ?? 'OGC:CRS84') === (a.crs ?? 'OGC:CRS84')
  if (e.kind === 'geography' && a.kind === 'geography') {
    return (e.crs === undefined || e.crs === (a.crs ?? 'OGC:CRS84')) &&
      (e.algorithm === undefined || e.algorithm === (a.algorithm ?? 'spherical'))
  }
  return true
}

/** The canonical spelling of a contract type, for messages. */
export function contractTypeToString (t: ContractType): string {
  switch (t.kind) {
    case 'primitive': {
      const p = t.type
      if (p.kind === 'decimal') return `decimal(${p.precision}, ${p.scale})`
      if (p.kind === 'fixed') return `fixed[${p.length}]`
      if (p.kind === 'geometry') return p.crs ? `geometry(${p.crs})` : 'geometry'
      if (p.kind === 'geography') return p.crs ? `geography(${p.crs}${p.algorithm ? ', ' + p.algorithm : ''})` : 'geography'
      return p.kind
    }
    case 'list': return t.element ? `list<${contractTypeToString(t.element)}>` : 'list'
    case 'map': return t.key && t.value ? `map<${contractTypeToString(t.key)}, ${contractTypeToString(t.value)}>` : 'map'
    case 'struct': return t.fields
      ? `struct<${t.fields.map(f => `${f.name}: ${contractTypeToString(f.type)}${f.required ? ' not null' : ''}`).join(', ')}>`
      : 'struct'
  }
}
