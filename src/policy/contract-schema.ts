/**
 * The shape of a schema contract file, defined once: TypeBox gives the validator, the TS type and
 * the JSON Schema that `openapi/policy.schema.json` embeds for inline contracts.
 */
import { Type } from '@sinclair/typebox'

const ContractColumnSchema = Type.Object({
  name: Type.String({ minLength: 1, description: 'Column path; nested columns by dotted path (`address.zip`).' }),
  type: Type.String({
    minLength: 1,
    description: 'Iceberg type, case-insensitive: `long`, `int`/`integer`, `decimal(12, 2)`, `fixed[16]`, `list<string>`, `map<string, long>`, `struct<a: int, b: string>`, or bare `struct`/`list`/`map` to check the kind only.'
  }),
  required: Type.Optional(Type.Boolean({ description: 'true: must be required; false: must be optional; absent: not checked.' })),
  doc: Type.Optional(Type.String({ description: 'The column doc must equal this text.' }))
}, { additionalProperties: false })

export const ContractSchema = Type.Object({
  columns: Type.Array(ContractColumnSchema, { description: 'Columns that must exist.' }),
  strict: Type.Optional(Type.Boolean({ description: 'true: columns the contract does not list are violations. Default false.' }))
}, { additionalProperties: false, $id: 'Contract', title: 'iceguard schema contract' })
