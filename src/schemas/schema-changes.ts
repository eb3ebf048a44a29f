/**
 * Wire shapes of the schema-changes endpoints (`POST /admin/v1/namespaces/{ns}/tables/{t}/schema-changes`
 * and `…/schema-changes/plan`). The change objects are validated loosely here (an `op` and the
 * fields any change may carry) and precisely by `readSchemaChanges`, which names every problem
 * with its index; the recursive type tree is parsed by `src/iceberg/parse.ts`.
 */
import { Type, type Static } from '@sinclair/typebox'
import { CHANGE_KINDS } from '../evolve/change-ops.js'
import { SchemaChangeSchema } from './change.js'
import { FindingSchema } from './finding.js'
import { CommitTableRequestSchema, IcebergTypeSchema, SchemaJsonSchema, TableIdentifierSchema } from './iceberg-rest.js'
import { ref } from './ref.js'
import { OverrideAppliedSchema, VerdictSchema } from './validate.js'

const path = (description: string) => Type.String({ minLength: 1, description })

const SchemaChangeOpSchema = Type.Object({
  op: Type.Union(CHANGE_KINDS.map(k => Type.Literal(k)), { description: 'The kind of change.' }),
  name: Type.Optional(path('add-column, add-nested-column: the new column\'s name.')),
  parent: Type.Optional(path('add-nested-column: the parent path; a list adds to its element struct, a map to its value struct.')),
  path: Type.Optional(path('The column, by dotted path (`address.zip`; `tags.element`, `attrs.value` for list elements and map values).')),
  type: Type.Optional(ref(IcebergTypeSchema, {
    description: 'A type: `long`, `decimal(10, 2)`, `list<string>`, `struct<a: int not null>`, or the spec\'s JSON form; ids in it are placeholders and may be left out.'
  })),
  doc: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The column doc; `null` in update-doc removes it.' })),
  'new-name': Type.Optional(path('rename-column: the new name (same parent).')),
  first: Type.Optional(Type.Literal(true, { description: 'move-column: to the front of its struct.' })),
  before: Type.Optional(path('move-column: a sibling (name or path).')),
  after: Type.Optional(path('move-column: a sibling (name or path).')),
  schema: Type.Optional(Type.Object({ fields: Type.Array(Type.Object({}, { additionalProperties: true })) }, {
    additionalProperties: true,
    description: 'union-by-name: the schema whose fields the table must hold (ids ignored).'
  })),
  'legacy-archival': Type.Optional(Type.Boolean({ description: 'ensure-column: when the type is incompatible, keep the old column as `<name>__legacy_N` and add a new one, in one commit.' })),
  from: Type.Optional(path('ensure-rename: the current name or path.')),
  to: Type.Optional(path('ensure-rename: the wanted name (or path under the same parent).'))
}, {
  $id: 'SchemaChangeOp',
  additionalProperties: true,
  description: 'One high-level change. Fields per op: add-column (name, type, doc); add-nested-column (parent, name, type, doc); rename-column (path, new-name); ' +
    'make-column-optional (path); update-column-type (path, type); update-doc (path, doc); move-column (path, first | before | after); delete-column (path); ' +
    'union-by-name (schema); ensure-column (path, type, doc, legacy-archival); ensure-rename (from, to).'
})

export const SchemaChangesRequestSchema = Type.Object({
  changes: Type.Array(ref(SchemaChangeOpSchema), { minItems: 1, description: 'Applied in order, each to the result of the ones before.' })
}, {
  $id: 'SchemaChangesRequest',
  additionalProperties: false,
  examples: [{ changes: [{ op: 'add-column', name: 'note', type: 'string', doc: 'Free text' }, { op: 'update-column-type', path: 'qty', type: 'long' }] }]
})

export const SchemaChangesQuerySchema = Type.Object({
  'dry-run': Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: answer the verdict and the exact CommitTableRequest without committing.' })),
  prefix: Type.Optional(Type.String({ description: 'The catalog `{prefix}` path segment, when the upstream uses one.' }))
}, { additionalProperties: false })

const outcomeProps = {
  table: ref(TableIdentifierSchema),
  committed: Type.Boolean({ description: 'Whether a commit reached the catalog and was applied.' }),
  noop: Type.Boolean({ description: 'The changes leave the schema as it is: nothing to commit.' }),
  'dry-run': Type.Boolean(),
  request: Type.Optional(ref(CommitTableRequestSchema, { description: 'The exact CommitTableRequest (absent for a no-op).' })),
  verdict: ref(VerdictSchema),
  findings: Type.Array(ref(FindingSchema)),
  diff: Type.Array(ref(SchemaChangeSchema), { description: 'The schema changes by field id.' }),
  summary: Type.String(),
  'metadata-location': Type.Optional(Type.String({ description: 'The table\'s metadata file after the commit.' })),
  'schema-id': Type.Integer({ description: 'The schema the table has (or would have) as current.' }),
  'last-column-id': Type.Integer(),
  schema: ref(SchemaJsonSchema, { description: 'That schema.' }),
  warnings: Type.Array(Type.String()),
  attempts: Type.Integer({ description: 'Commits sent: more than one when a concurrent commit won and the changes were re-applied to its result.' }),
  override: Type.Optional(ref(OverrideAppliedSchema))
}

export const SchemaChangesResponseSchema = Type.Object(outcomeProps, { $id: 'SchemaChangesResponse', additionalProperties: false })

export const PlanRequestSchema = Type.Object({
  contract: Type.Optional(Type.Union([
    Type.String({ description: 'The contract as YAML (or JSON) text.' }),
    Type.Object({ columns: Type.Array(Type.Object({}, { additionalProperties: true })) }, { additionalProperties: true, description: 'The contract in its JSON form.' })
  ], { description: 'The contract (policy format). Absent: the contract the effective policy assigns to the table.' }))
}, { $id: 'PlanRequest', additionalProperties: false })

export const PlanQuerySchema = Type.Object({
  apply: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: commit the plan through the gate.' })),
  prefix: Type.Optional(Type.String({ description: 'The catalog `{prefix}` path segment, when the upstream uses one.' }))
}, { additionalProperties: false })

export const PlanResponseSchema = Type.Object({
  ...outcomeProps,
  changes: Type.Array(ref(SchemaChangeOpSchema), { description: 'The changes that bring the table into conformance (empty when it conforms).' }),
  unresolved: Type.Array(Type.Object({ path: Type.String(), message: Type.String() }, { additionalProperties: false }), {
    description: 'What the contract asks for that no safe evolution does (a non-promotable type, a column made required).'
  })
}, { $id: 'PlanResponse', additionalProperties: false })

export type SchemaChangesResponse = Static<typeof SchemaChangesResponseSchema>
export type PlanResponse = Static<typeof PlanResponseSchema>

/** The named shapes of these endpoints, for `SHARED_SCHEMAS`. */
export const SCHEMA_CHANGES_SCHEMAS = [SchemaChangeOpSchema, SchemaChangesRequestSchema, SchemaChangesResponseSchema, PlanRequestSchema, PlanResponseSchema]
