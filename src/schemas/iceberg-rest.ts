/**
 * The subset of the Iceberg REST spec (open-api/rest-catalog-open-api.yaml) that iceguard reads.
 * Envelopes only: the recursive type tree and the update/requirement bodies are parsed by
 * `src/iceberg/parse.ts`, which reports every problem with its path; here the shapes stay open
 * (additional properties allowed) so nothing the catalog would accept is refused on the way.
 */
import { Type, type Static } from '@sinclair/typebox'
import { ref } from './ref.js'

export const TableIdentifierSchema = Type.Object({
  namespace: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'Namespace levels, outermost first.' }),
  name: Type.String({ minLength: 1 })
}, { $id: 'TableIdentifier', additionalProperties: false, examples: [{ namespace: ['db'], name: 'orders' }] })

/** A primitive type string (`long`, `decimal(10,2)`, `fixed[16]`) or a struct/list/map object. */
export const IcebergTypeSchema = Type.Union([
  Type.String({ examples: ['long', 'decimal(10,2)'] }),
  Type.Object({ type: Type.Union([Type.Literal('struct'), Type.Literal('list'), Type.Literal('map')]) }, { additionalProperties: true })
], { $id: 'IcebergType', description: 'An Iceberg type in its JSON form (spec Appendix C).' })

export const SchemaJsonSchema = Type.Object({
  type: Type.Literal('struct'),
  'schema-id': Type.Optional(Type.Integer()),
  'identifier-field-ids': Type.Optional(Type.Array(Type.Integer())),
  fields: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'StructField objects: id, name, type, required, doc.' })
}, { $id: 'Schema', additionalProperties: true, description: 'An Iceberg schema in its JSON form (spec Appendix C).' })

export const TableMetadataJsonSchema = Type.Object({
  'format-version': Type.Integer({ minimum: 1, maximum: 3 }),
  schemas: Type.Optional(Type.Array(ref(SchemaJsonSchema))),
  'current-schema-id': Type.Optional(Type.Integer())
}, { $id: 'TableMetadata', additionalProperties: true, description: 'Table metadata as stored in a metadata file or returned by loadTable (spec "Table Metadata").' })

const TableRequirementSchema = Type.Object({ type: Type.String() }, { additionalProperties: true })
const TableUpdateSchema = Type.Object({ action: Type.String() }, { additionalProperties: true })

export const CommitTableRequestSchema = Type.Object({
  // Iceberg Java's RESTObjectMapper writes an absent identifier as null; null reads as absent.
  identifier: Type.Optional(Type.Union([ref(TableIdentifierSchema), Type.Null()])),
  requirements: Type.Array(TableRequirementSchema, { description: 'TableRequirement objects, each with a `type`.' }),
  updates: Type.Array(TableUpdateSchema, { description: 'TableUpdate objects, each with an `action`.' })
}, { $id: 'CommitTableRequest', additionalProperties: true })

export const CommitTransactionRequestSchema = Type.Object({
  'table-changes': Type.Array(ref(CommitTableRequestSchema), { minItems: 1, description: 'One CommitTableRequest per table; each must carry its `identifier`.' })
}, { $id: 'CommitTransactionRequest', additionalProperties: true })

export const CreateTableRequestSchema = Type.Object({
  name: Type.String(),
  location: Type.Optional(Type.String()),
  schema: ref(SchemaJsonSchema),
  'partition-spec': Type.Optional(Type.Object({}, { additionalProperties: true })),
  'write-order': Type.Optional(Type.Object({}, { additionalProperties: true })),
  'stage-create': Type.Optional(Type.Boolean()),
  properties: Type.Optional(Type.Record(Type.String(), Type.String()))
}, { $id: 'CreateTableRequest', additionalProperties: true })

export const CommitTableResponseSchema = Type.Object({
  'metadata-location': Type.String(),
  metadata: ref(TableMetadataJsonSchema)
}, { $id: 'CommitTableResponse', additionalProperties: true })

export const LoadTableResultSchema = Type.Object({
  'metadata-location': Type.Optional(Type.Union([Type.String(), Type.Null()])),
  metadata: ref(TableMetadataJsonSchema),
  config: Type.Optional(Type.Record(Type.String(), Type.String()))
}, { $id: 'LoadTableResult', additionalProperties: true })

export type TableIdentifier = Static<typeof TableIdentifierSchema>
