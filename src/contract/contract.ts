/**
 * Schema contracts: the columns a table must keep, with type, required flag and doc. The
 * SCHEMA_CONTRACT rule checks the proposed schema against one on every commit; the admin API
 * shows `checkContract` against the current schema. A leaf of the model: the policy reads
 * contracts from YAML (src/policy/contract.ts), the rules and the evolve planner check them.
 */
import { indexSchema } from '../iceberg/schema-index.js'
import { typeToString } from '../iceberg/print.js'
import type { Schema } from '../iceberg/types.js'
import { contractTypeToString, matchesContractType, needsV3, type ContractType } from './contract-type.js'

export interface ContractColumn {
  /** Dotted path. */
  readonly name: string
  readonly type: ContractType
  readonly required?: boolean
  readonly doc?: string
}

export interface Contract {
  /** The file it came from (as written in the policy), or `inline`. */
  readonly source: string
  readonly columns: readonly ContractColumn[]
  readonly strict: boolean
}

export type ContractViolationKind = 'missing' | 'type' | 'required' | 'optional' | 'doc' | 'unlisted' | 'unsupported-type'

export interface ContractViolation {
  readonly kind: ContractViolationKind
  readonly path: string
  readonly fieldId?: number
  readonly expected?: string
  readonly actual?: string
  /** Stands alone: `Cannot …: …`. */
  readonly message: string
}

/** Names of the pseudo-fields that carry list element and map key/value ids. */
const PSEUDO = new Set(['element', 'key', 'value'])

/**
 * Every way `schema` breaks `contract`. Nested columns are found by dotted path; a list's element
 * or a map's key/value is `.element`, `.key`, `.value` in that path.
 */
export function checkContract (contract: Contract, schema: Schema, formatVersion: number): ContractViolation[] {
  const out: ContractViolation[] = []
  const index = indexSchema(schema)
  const covered = new Set<number>()

  for (const col of contract.columns) {
    const expected = contractTypeToString(col.type)
    if (formatVersion < 3 && needsV3(col.type)) {
      out.push({ kind: 'unsupported-type', path: col.name, expected, message: `Cannot satisfy contract column ${col.name}: type ${expected} needs format version 3, the table is v${formatVersion}` })
    }
    const id = index.byPath.get(col.name)
    const field = id === undefined ? undefined : index.byId.get(id)
    if (id === undefined || field === undefined) {
      out.push({ kind: 'missing', path: col.name, expected, message: `Cannot find contract column ${col.name}: the contract requires it with type ${expected}` })
      continue
    }
    covered.add(id)
    // A column given with its full nested type covers everything beneath it.
    if (col.type.kind !== 'primitive' && !isBare(col.type)) coverDescendants(index, id, covered)
    const actual = typeToString(field.type)
    if (!matchesContractType(col.type, field.type)) {
      out.push({ kind: 'type', path: col.name, fieldId: id, expected, actual, message: `Cannot satisfy contract column ${col.name} (id ${id}): type is ${actual}, the contract requires ${expected}` })
    }
    if (col.required === true && !field.required) {
      out.push({ kind: 'required', path: col.name, fieldId: id, expected: 'required', actual: 'optional', message: `Cannot satisfy contract column ${col.name} (id ${id}): it is optional, the contract requires it to be required` })
    }
    if (col.required === false && field.required) {
      out.push({ kind: 'optional', path: col.name, fieldId: id, expected: 'optional', actual: 'required', message: `Cannot satisfy contract column ${col.name} (id ${id}): it is required, the contract requires it to be optional` })
    }
    if (col.doc !== undefined && (field.field?.doc ?? '').trim() !== col.doc.trim()) {
      const actualDoc = field.field?.doc
      out.push({ kind: 'doc', path: col.name, fieldId: id, expected: col.doc, ...(actualDoc !== undefined && { actual: actualDoc }), message: `Cannot satisfy contract column ${col.name} (id ${id}): doc is ${actualDoc === undefined ? 'missing' : JSON.stringify(actualDoc)}, the contract requires ${JSON.stringify(col.doc)}` })
    }
  }

  if (contract.strict) {
    for (const f of index.byId.values()) {
      if (covered.has(f.id) || (PSEUDO.has(f.name) && f.field === undefined)) continue
      if (parentReported(index, f.id, covered)) continue
      out.push({ kind: 'unlisted', path: f.path, fieldId: f.id, actual: typeToString(f.type), message: `Cannot keep column ${f.path} (id ${f.id}): the strict contract ${contract.source} does not list it` })
    }
  }
  return out
}

function isBare (t: ContractType): boolean {
  return (t.kind === 'struct' && t.fields === undefined) || (t.kind === 'list' && t.element === undefined) || (t.kind === 'map' && t.key === undefined)
}

type Index = ReturnType<typeof indexSchema>

function coverDescendants (index: Index, id: number, covered: Set<number>): void {
  for (const f of index.byId.values()) {
    let p = f.parentId
    while (p !== undefined) {
      if (p === id) { covered.add(f.id); break }
      p = index.byId.get(p)?.parentId
    }
  }
}

/**
 * A field under a list element or map value is unlisted only if its own path is not listed; the
 * pseudo-field itself never needs listing. A field whose parent is not covered is reported on its
 * own only when the parent is covered (so an unlisted struct is reported once, not per child).
 */
function parentReported (index: Index, id: number, covered: Set<number>): boolean {
  let p = index.byId.get(id)?.parentId
  while (p !== undefined) {
    const parent = index.byId.get(p)
    if (!parent) return false
    if (PSEUDO.has(parent.name) && parent.field === undefined) { p = parent.parentId; continue }
    // The nearest real ancestor: if it is itself unlisted, it is reported instead of this field.
    return !covered.has(p)
  }
  return false
}
