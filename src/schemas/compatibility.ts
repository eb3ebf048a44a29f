/**
 * `POST /admin/v1/namespaces/{ns}/tables/{t}/compatibility`: "is this schema compatible with the
 * table?", with just the schema. The answer is the gate's judgement of the commit that would
 * install it, and that commit.
 */
import { Type, type Static } from '@sinclair/typebox'
import { SchemaChangeSchema } from './change.js'
import { FindingSchema } from './finding.js'
import { CommitTableRequestSchema, TableIdentifierSchema } from './iceberg-rest.js'
import { ref } from './ref.js'
import { OverrideAppliedSchema, VerdictSchema } from './validate.js'

export const CompatibilityRequestSchema = Type.Object({
  schema: Type.Object({
    type: Type.Optional(Type.Literal('struct')),
    fields: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'The fields, as in an Iceberg schema; `id` (and `element-id`, `key-id`, `value-id`) optional.' }),
    'identifier-field-ids': Type.Optional(Type.Array(Type.Integer(), { description: 'Absent: the table\'s current identifier fields are kept.' }))
  }, {
    additionalProperties: true,
    description: 'The whole schema the table should have, as Iceberg schema JSON. Field ids are optional: a field without one is matched by name within ' +
      'its struct in the current schema (as union-by-name matches) and takes that field\'s id; an unmatched one gets a fresh id above last-column-id. ' +
      'A field the schema leaves out is dropped.'
  })
}, {
  $id: 'CompatibilityRequest',
  additionalProperties: false,
  examples: [{ schema: { type: 'struct', fields: [{ name: 'id', required: true, type: 'long' }, { name: 'note', required: false, type: 'string' }] } }]
})

export const CompatibilityResponseSchema = Type.Object({
  table: ref(TableIdentifierSchema),
  compatible: Type.Boolean({ description: 'true when the gate would let the commit through (verdict allow or warn).' }),
  verdict: ref(VerdictSchema),
  findings: Type.Array(ref(FindingSchema), { description: 'Every finding under the table\'s effective policy.' }),
  changes: Type.Array(ref(SchemaChangeSchema), { description: 'The changes by field id from the current schema.' }),
  summary: Type.String({ description: 'The changes, one line each.' }),
  explanation: Type.String({ description: 'Why the verdict is what it is.' }),
  request: Type.Optional(ref(CommitTableRequestSchema, { description: 'The CommitTableRequest that would install the schema; absent when the table already has it.' })),
  'schema-id': Type.Integer({ description: 'The id the schema would have (the current one when nothing changes, an older one when it equals an older schema).' }),
  'last-column-id': Type.Integer(),
  warnings: Type.Array(Type.String()),
  override: Type.Optional(ref(OverrideAppliedSchema))
}, { $id: 'CompatibilityResponse', additionalProperties: false })

export type CompatibilityResponse = Static<typeof CompatibilityResponseSchema>
