/**
 * What changed between two schemas, field id by field id. A field's id is its identity and its
 * name a label (spec "Schema Evolution"), so a rename is one `field-renamed`, never a drop plus an add.
 *
 * List elements and map keys/values carry ids of their own and appear here as fields named
 * `element`, `key` and `value`; their path is the parent's path plus that name.
 */
import type { IcebergType, NestedField } from '../../iceberg/types.js'

interface ChangeBase {
  readonly fieldId: number
  /** Full dotted path in the new schema (the old one for `field-dropped`). */
  readonly path: string
}

export type SchemaChange =
  | ChangeBase & { readonly kind: 'field-added', readonly parentId?: number, readonly field: NestedField }
  | ChangeBase & { readonly kind: 'field-dropped', readonly parentId?: number, readonly field: NestedField }
  | ChangeBase & { readonly kind: 'field-renamed', readonly oldPath: string, readonly oldName: string, readonly newName: string }
  /** A primitive changed to another primitive. */
  | ChangeBase & { readonly kind: 'type-changed', readonly from: IcebergType, readonly to: IcebergType }
  /** Primitive ↔ struct/list/map, or between nested kinds: never allowed by the spec. */
  | ChangeBase & { readonly kind: 'kind-changed', readonly from: IcebergType, readonly to: IcebergType }
  | ChangeBase & { readonly kind: 'nullability-changed', readonly from: 'required' | 'optional', readonly to: 'required' | 'optional' }
  | ChangeBase & { readonly kind: 'doc-changed', readonly from?: string, readonly to?: string }
  | ChangeBase & { readonly kind: 'default-changed', readonly which: 'initial-default' | 'write-default', readonly from?: unknown, readonly to?: unknown }
  /** The field now sits under another parent (spec: not allowed). */
  | ChangeBase & { readonly kind: 'field-moved', readonly oldPath: string, readonly oldParentId?: number, readonly newParentId?: number }
  /** Same parent, another position among its siblings. */
  | ChangeBase & { readonly kind: 'field-reordered', readonly oldIndex: number, readonly newIndex: number }

/** Identifier fields are a property of the schema, not of one field. */
export interface IdentifierFieldsChange {
  readonly kind: 'identifier-fields-changed'
  readonly added: readonly number[]
  readonly removed: readonly number[]
}

export type Change = SchemaChange | IdentifierFieldsChange
