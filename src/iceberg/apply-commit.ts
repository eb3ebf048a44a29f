/**
 * Applies a commit's updates to table metadata in order, as the reference server does, so the
 * rules judge exactly what the catalog would store. The application is the one metadata builder's
 * (`metadata-builder.ts`), the same the embedded catalog stores with; the gate hands it metadata
 * read without snapshots and logs, so what needs those is checked for shape only. Problems never
 * throw: each becomes an issue with the path of the update.
 */
import { initialFormatVersion, TableMetadataBuilder, type ApplyResult } from './metadata-builder.js'
import type { UpdateTarget } from './table-update.js'
import type { TableMetadata } from './types.js'

export type { ApplyIssue, ApplyResult } from './metadata-builder.js'
export { checkRequirements } from './requirements.js'

/**
 * Applies `updates` to `base` (undefined: a create or staged create, starting empty with the
 * format version its first `upgrade-format-version` names). add-schema reuses the id of an equal
 * existing schema and ignores the client's `schema-id` and deprecated `last-column-id`;
 * `set-current-schema -1` means the schema added by this commit. With `target` view, only the
 * actions of a view are accepted and a new view version makes its schema current.
 */
export function applyUpdates (base: TableMetadata | undefined, updates: unknown[], target: UpdateTarget = 'table'): ApplyResult {
  const builder = base === undefined
    ? TableMetadataBuilder.fromEmpty(initialFormatVersion(Array.isArray(updates) ? updates : []), { data: false })
    : TableMetadataBuilder.from(base)
  builder.applyAll(updates, target)
  return builder.result()
}
