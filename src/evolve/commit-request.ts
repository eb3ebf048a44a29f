/**
 * The CommitTableRequest for an evolved schema, shaped as Java's `RESTTableOperations` sends a
 * `table.updateSchema()…commit()`:
 *
 * - requirements: `assert-table-uuid`, `assert-last-assigned-field-id`, `assert-current-schema-id`,
 *   so the catalog refuses the commit (409) when anything changed since the schema was read;
 * - updates: `add-schema` then `set-current-schema -1`; or, when the result equals an older schema,
 *   only `set-current-schema <id>` (an add-schema equal to an existing schema leaves "last added"
 *   unset in Java, so `-1` would fail there).
 *
 * When the table has a name mapping that the change affects, a `set-properties` of the updated
 * `schema.name-mapping.default` follows, in the same commit, as Java's `UpdateSchema` sends it.
 *
 * `add-schema` carries the deprecated `last-column-id` (the table's new one, never lower than the
 * base's) because catalogs built on Java before 1.8 read it as required; newer ones ignore it and
 * compute their own.
 */
import { schemaToJson } from '../iceberg/print.js'
import type { TableMetadata } from '../iceberg/types.js'
import type { EvolveResult } from './apply-changes.js'
import { NAME_MAPPING_PROPERTY } from './name-mapping.js'

interface CommitTableRequestJson {
  identifier?: { namespace: string[], name: string }
  requirements: Array<Record<string, unknown>>
  updates: Array<Record<string, unknown>>
}

/** The exact commit body; undefined for a no-op (there is nothing to send). */
export function buildCommitRequest (
  metadata: TableMetadata,
  result: EvolveResult,
  identifier?: { readonly namespace: readonly string[], readonly name: string }
): CommitTableRequestJson | undefined {
  if (result.noop) return undefined
  const requirements: Array<Record<string, unknown>> = []
  // Format v1 tables may have no uuid; there is nothing to assert then.
  if (metadata.tableUuid !== undefined) requirements.push({ type: 'assert-table-uuid', uuid: metadata.tableUuid })
  requirements.push(
    { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': metadata.lastColumnId },
    { type: 'assert-current-schema-id', 'current-schema-id': metadata.currentSchemaId }
  )
  const updates: Array<Record<string, unknown>> = result.reusedSchemaId !== undefined
    ? [{ action: 'set-current-schema', 'schema-id': result.reusedSchemaId }]
    : [
        { action: 'add-schema', schema: schemaToJson(result.schema), 'last-column-id': result.lastColumnId },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
  if (result.nameMapping !== undefined) updates.push({ action: 'set-properties', updates: { [NAME_MAPPING_PROPERTY]: result.nameMapping } })
  const body: CommitTableRequestJson = { requirements, updates }
  return identifier === undefined ? body : { identifier: { namespace: [...identifier.namespace], name: identifier.name }, ...body }
}
