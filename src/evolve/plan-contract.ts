/**
 * The changes that bring a table into conformance with a schema contract (src/policy/contract.ts):
 * add the columns it is missing, promote the ones whose type the spec lets it promote, make
 * columns optional where the contract says so, set docs, and in `strict` mode drop the columns the
 * contract does not list. Everything else the contract asks for cannot be done by a safe evolution
 * (a non-promotable type, making a column required) and is reported as `unresolved`, never forced.
 *
 * Applying the plan and planning again gives an empty plan: the planner judges with the same
 * comparison as `checkContract`.
 */
import { indexSchema, type SchemaIndex } from '../iceberg/schema-index.js'
import { primitiveToString, typeToJson, typeToString } from '../iceberg/print.js'
import { isPromotionAllowed } from '../iceberg/promotion.js'
import type { IcebergType, TableMetadata } from '../iceberg/types.js'
import { checkContract, type Contract, type ContractColumn } from '../contract/contract.js'
import { contractTypeToString, matchesContractType, needsV3 } from '../contract/contract-type.js'
import { currentSchemaOf, protectedIds } from './apply-changes.js'
import type { SchemaChangeOp } from './change-ops.js'
import { contractToType } from './type-input.js'
import { idsIn, isPrimitive, type WType } from './working-schema.js'

export interface Unresolved {
  readonly path: string
  /** Stands alone: what the contract wants and why the plan cannot do it. */
  readonly message: string
}

interface ContractPlan {
  readonly changes: SchemaChangeOp[]
  readonly unresolved: Unresolved[]
}

/** A type for the wire: the spelling for primitives, the spec's JSON (placeholder ids) for nested types. */
function typeForWire (t: IcebergType): unknown {
  return isPrimitive(t) ? primitiveToString(t) : typeToJson(t)
}

const depth = (c: ContractColumn): number => c.name.split('.').length

export function planFromContract (metadata: TableMetadata, contract: Contract): ContractPlan {
  const current = currentSchemaOf(metadata)
  const index = indexSchema(current)
  const fv = metadata.formatVersion
  const changes: SchemaChangeOp[] = []
  const adds: SchemaChangeOp[] = []
  const unresolved: Unresolved[] = []
  /** Paths the plan creates, with their types (so later columns can nest under them). */
  const planned = new Map<string, IcebergType>()
  const listed = contract.columns.map(c => c.name)

  // Parents before children, so a listed struct is created whole before its fields are looked at.
  const columns = [...contract.columns].sort((a, b) => depth(a) - depth(b))
  for (const col of columns) {
    const expected = contractTypeToString(col.type)
    if (fv < 3 && needsV3(col.type)) {
      unresolved.push({ path: col.name, message: `Cannot plan ${col.name}: type ${expected} needs format version 3, the table is v${fv}` })
      continue
    }
    const id = index.byPath.get(col.name)
    const entry = id === undefined ? undefined : index.byId.get(id)
    if (entry === undefined) {
      if (planned.has(col.name)) continue
      planMissing(col, expected, index, planned, listed, contract.strict, adds, unresolved)
      continue
    }
    if (!matchesContractType(col.type, entry.type)) {
      const target = col.type.kind === 'primitive' ? col.type.type : undefined
      if (target !== undefined && isPrimitive(entry.type) && isPromotionAllowed(entry.type, target, fv)) {
        changes.push({ op: 'update-column-type', path: col.name, type: primitiveToString(target) })
      } else {
        unresolved.push({
          path: col.name,
          message: `Cannot plan ${col.name} (id ${entry.id}): it is ${typeToString(entry.type)}, the contract requires ${expected}, which is not a promotion the spec allows for format version ${fv}; ` +
            'replace it deliberately (ensure-column with legacy-archival)'
        })
      }
    }
    if (col.required === false && entry.required) changes.push({ op: 'make-column-optional', path: col.name })
    if (col.required === true && !entry.required) {
      unresolved.push({ path: col.name, message: `Cannot plan ${col.name} (id ${entry.id}): the contract requires it to be required, and a column is never made required (rows written without it would become unreadable)` })
    }
    if (col.doc !== undefined && (entry.field?.doc ?? '').trim() !== col.doc.trim()) {
      if (entry.field === undefined) unresolved.push({ path: col.name, message: `Cannot plan ${col.name}: a list element or map key/value has no doc` })
      else changes.push({ op: 'update-doc', path: col.name, doc: col.doc })
    }
  }

  if (contract.strict) {
    const protectedBy = protectedIds(metadata, current)
    for (const v of checkContract(contract, current, fv)) {
      if (v.kind !== 'unlisted' || v.fieldId === undefined) continue
      const dropped = index.byId.get(v.fieldId)
      const ids = [v.fieldId, ...(dropped === undefined ? [] : idsIn(dropped.type as WType))]
      const by = ids.map(id => protectedBy.get(id)).find(x => x !== undefined)
      if (listed.some(p => p.startsWith(`${v.path}.`))) {
        unresolved.push({ path: v.path, message: `Cannot drop ${v.path} (id ${v.fieldId}): the strict contract lists columns inside it but not ${v.path} itself; list it` })
      } else if (by !== undefined) {
        unresolved.push({ path: v.path, message: `Cannot drop ${v.path} (id ${v.fieldId}): the strict contract does not list it, but ${by} refers to it` })
      } else if (dropped?.field === undefined) {
        unresolved.push({ path: v.path, message: `Cannot drop ${v.path}: a list element or map key/value cannot be dropped` })
      } else {
        changes.push({ op: 'delete-column', path: v.path })
      }
    }
  }
  // Adds first: a later change may name a column the plan creates.
  return { changes: [...adds, ...changes], unresolved }
}

function planMissing (
  col: ContractColumn, expected: string, index: SchemaIndex, planned: Map<string, IcebergType>, listed: readonly string[],
  strict: boolean, adds: SchemaChangeOp[], unresolved: Unresolved[]
): void {
  const converted = contractToType(col.type)
  if (converted.type === undefined) {
    // A bare `struct` that the contract fills with nested columns is created by those columns.
    if (col.type.kind === 'struct' && listed.some(p => p.startsWith(`${col.name}.`))) return
    unresolved.push({ path: col.name, message: `Cannot plan missing column ${col.name}: ${converted.problem ?? `type ${expected} cannot be created`}` })
    return
  }
  // The nearest ancestor that exists (or is planned); the missing levels between become structs.
  const segments = col.name.split('.')
  let k = segments.length - 1
  while (k > 0 && !index.byPath.has(segments.slice(0, k).join('.')) && !planned.has(segments.slice(0, k).join('.'))) k--
  const parent = segments.slice(0, k).join('.')
  const parentType = parent === '' ? undefined : planned.get(parent) ?? index.byId.get(index.byPath.get(parent) as number)?.type
  if (parentType !== undefined && !holdsStruct(parentType)) {
    unresolved.push({ path: col.name, message: `Cannot plan missing column ${col.name}: ${parent} is ${typeToString(parentType)}, not a struct` })
    return
  }
  let type: IcebergType = converted.type
  for (let i = segments.length - 1; i > k; i--) {
    type = { kind: 'struct', fields: [{ id: 0, name: segments[i] as string, required: false, type }] }
  }
  const name = segments[k] as string
  const doc = segments.length - 1 === k ? col.doc : undefined
  adds.push(parent === ''
    ? { op: 'add-column', name, type: typeForWire(type), ...(doc !== undefined && { doc }) }
    : { op: 'add-nested-column', parent, name, type: typeForWire(type), ...(doc !== undefined && { doc }) })
  markPlanned(planned, parent === '' ? name : `${parent}.${name}`, type)
  // Under a strict contract every struct created on the way must be listed too.
  const last = strict ? segments.length : k + 1
  for (let i = k + 1; i < last; i++) {
    const created = segments.slice(0, i).join('.')
    if (!listed.includes(created)) {
      unresolved.push({ path: created, message: `Cannot keep ${created} under the strict contract: it is created to hold ${col.name}, but the contract does not list ${created}; list it` })
    }
  }
  if (col.required === true) {
    unresolved.push({ path: col.name, message: `Cannot plan ${col.name} as required: a column added to an existing table is optional; it is added as optional` })
  }
}

function holdsStruct (t: IcebergType): boolean {
  return t.kind === 'struct' || (t.kind === 'list' && t.element.kind === 'struct') || (t.kind === 'map' && t.value.kind === 'struct')
}

function markPlanned (planned: Map<string, IcebergType>, path: string, type: IcebergType): void {
  planned.set(path, type)
  if (type.kind === 'struct') for (const f of type.fields) markPlanned(planned, `${path}.${f.name}`, f.type)
  else if (type.kind === 'list') markPlanned(planned, `${path}.element`, type.element)
  else if (type.kind === 'map') { markPlanned(planned, `${path}.key`, type.key); markPlanned(planned, `${path}.value`, type.value) }
}
