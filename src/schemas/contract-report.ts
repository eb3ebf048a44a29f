/** `GET /admin/v1/namespaces/{ns}/tables/{table}/contract`: the table's contract and whether the current schema meets it. */
import { Type, type Static } from '@sinclair/typebox'
import type { Contract, ContractViolation } from '../contract/contract.js'
import { contractTypeToString } from '../contract/contract-type.js'
import { TableIdentifierSchema, type TableIdentifier } from './iceberg-rest.js'
import { ref } from './ref.js'

export const ContractViolationSchema = Type.Object({
  kind: Type.Union(['missing', 'type', 'required', 'optional', 'doc', 'unlisted', 'unsupported-type'].map(k => Type.Literal(k))),
  path: Type.String(),
  'field-id': Type.Optional(Type.Integer()),
  expected: Type.Optional(Type.String()),
  actual: Type.Optional(Type.String()),
  message: Type.String()
}, { $id: 'ContractViolation', additionalProperties: false })

export const ContractReportSchema = Type.Object({
  table: ref(TableIdentifierSchema),
  source: Type.String({ description: 'Where the contract comes from: its file as named in the policy, or `inline`.' }),
  strict: Type.Boolean({ description: 'Whether columns the contract does not list are violations.' }),
  columns: Type.Array(Type.Object({
    name: Type.String(),
    type: Type.String(),
    required: Type.Optional(Type.Boolean()),
    doc: Type.Optional(Type.String())
  }, { additionalProperties: false })),
  'schema-id': Type.Integer({ description: 'The current schema the contract was checked against.' }),
  'meets-contract': Type.Boolean(),
  violations: Type.Array(ref(ContractViolationSchema))
}, { $id: 'ContractReport', additionalProperties: false })

export type ContractReport = Static<typeof ContractReportSchema>

export function contractReport (table: TableIdentifier, contract: Contract, schemaId: number, violations: readonly ContractViolation[]): ContractReport {
  return {
    table,
    source: contract.source,
    strict: contract.strict,
    columns: contract.columns.map(c => {
      const col: ContractReport['columns'][number] = { name: c.name, type: contractTypeToString(c.type) }
      if (c.required !== undefined) col.required = c.required
      if (c.doc !== undefined) col.doc = c.doc
      return col
    }),
    'schema-id': schemaId,
    'meets-contract': violations.length === 0,
    violations: violations.map(v => {
      const out: Static<typeof ContractViolationSchema> = { kind: v.kind, path: v.path, message: v.message }
      if (v.fieldId !== undefined) out['field-id'] = v.fieldId
      if (v.expected !== undefined) out.expected = v.expected
      if (v.actual !== undefined) out.actual = v.actual
      return out
    })
  }
}
