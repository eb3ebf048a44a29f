/** `POST /admin/v1/diff`: two schemas, or a table and two of its schema ids. */
import { Type, type Static } from '@sinclair/typebox'
import { SchemaChangeSchema } from './change.js'
import { SchemaJsonSchema, TableIdentifierSchema } from './iceberg-rest.js'
import { ref } from './ref.js'

export const DiffRequestSchema = Type.Object({
  from: Type.Optional(ref(SchemaJsonSchema, { description: 'The older schema (with `to`).' })),
  to: Type.Optional(ref(SchemaJsonSchema, { description: 'The newer schema (with `from`).' })),
  table: Type.Optional(ref(TableIdentifierSchema, { description: 'A table whose schemas to compare (with `from-schema-id`).' })),
  'from-schema-id': Type.Optional(Type.Integer({ description: 'Schema id of the older schema in the table.' })),
  'to-schema-id': Type.Optional(Type.Integer({ description: 'Schema id of the newer schema; default: the current schema.' }))
}, {
  $id: 'DiffRequest',
  additionalProperties: false,
  description: 'Either `from` and `to` (two schemas), or `table` with `from-schema-id` (and optionally `to-schema-id`).',
  examples: [{ table: { namespace: ['db'], name: 'orders' }, 'from-schema-id': 0, 'to-schema-id': 3 }]
})

export const DiffResponseSchema = Type.Object({
  'from-schema-id': Type.Optional(Type.Integer()),
  'to-schema-id': Type.Optional(Type.Integer()),
  changes: Type.Array(ref(SchemaChangeSchema)),
  summary: Type.String({ description: 'The changes in one line each, for people.' })
}, { $id: 'DiffResponse', additionalProperties: false })

export type DiffResponse = Static<typeof DiffResponseSchema>
