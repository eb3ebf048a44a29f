/**
 * The Iceberg type model: the domain form of the spec's schemas and table metadata.
 *
 * Wire JSON (kebab-case, type strings such as "decimal(10,2)") becomes these values once, in
 * `parse.ts`; `print.ts` gives the spec's spelling back. Everything here is plain data: no I/O,
 * no classes, so values can be compared, cloned and serialised freely.
 *
 * Spec: format/spec.md "Schemas and Data Types", "Table Metadata"; Appendix C (JSON serialization).
 */

/** Primitive type names that take no parameters. v3 adds the last four; geometry/geography carry parameters. */
export type SimplePrimitiveName =
  | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'date' | 'time'
  | 'timestamp' | 'timestamptz' | 'string' | 'uuid' | 'binary'
  | 'timestamp_ns' | 'timestamptz_ns' | 'unknown' | 'variant'

export type PrimitiveType =
  | { readonly kind: SimplePrimitiveName }
  | { readonly kind: 'decimal', readonly precision: number, readonly scale: number }
  | { readonly kind: 'fixed', readonly length: number }
  /** v3. `crs` defaults to "OGC:CRS84" when absent. */
  | { readonly kind: 'geometry', readonly crs?: string }
  /** v3. `crs` defaults to "OGC:CRS84", `algorithm` to "spherical". */
  | { readonly kind: 'geography', readonly crs?: string, readonly algorithm?: string }

export interface NestedField {
  readonly id: number
  readonly name: string
  readonly required: boolean
  readonly type: IcebergType
  readonly doc?: string
  /** Raw JSON value of `initial-default`; undefined when absent or null (a null default is none). */
  readonly initialDefault?: unknown
  /** Raw JSON value of `write-default`. */
  readonly writeDefault?: unknown
}

export interface StructType {
  readonly kind: 'struct'
  readonly fields: readonly NestedField[]
}

export interface ListType {
  readonly kind: 'list'
  readonly elementId: number
  readonly elementRequired: boolean
  readonly element: IcebergType
}

export interface MapType {
  readonly kind: 'map'
  readonly keyId: number
  readonly key: IcebergType
  readonly valueId: number
  readonly valueRequired: boolean
  readonly value: IcebergType
}

export type NestedType = StructType | ListType | MapType
export type IcebergType = PrimitiveType | NestedType

export interface Schema {
  /** May be undefined in a commit's `add-schema` (the server assigns ids). */
  readonly schemaId?: number
  readonly identifierFieldIds: readonly number[]
  readonly struct: StructType
}

export interface PartitionField {
  readonly sourceIds: readonly number[]
  readonly fieldId?: number
  readonly name: string
  /** Spec spelling: identity, bucket[N], truncate[W], year, month, day, hour, void. */
  readonly transform: string
}

export interface PartitionSpec {
  readonly specId: number
  readonly fields: readonly PartitionField[]
}

export interface SortField {
  readonly sourceIds: readonly number[]
  readonly transform: string
  readonly direction: string
  readonly nullOrder: string
}

export interface SortOrder {
  readonly orderId: number
  readonly fields: readonly SortField[]
}

/** The parts of table metadata that schema rules need. Snapshots and the rest are not modelled. */
export interface TableMetadata {
  readonly formatVersion: 1 | 2 | 3
  readonly tableUuid?: string
  readonly location?: string
  readonly lastColumnId: number
  readonly schemas: readonly Schema[]
  readonly currentSchemaId: number
  readonly partitionSpecs: readonly PartitionSpec[]
  readonly defaultSpecId: number
  readonly lastPartitionId?: number
  readonly sortOrders: readonly SortOrder[]
  readonly defaultSortOrderId: number
  readonly properties: Readonly<Record<string, string>>
  /** Ref name → snapshot id, as a decimal string so 64-bit ids keep every digit. */
  readonly refs: Readonly<Record<string, string>>
  /** Ref name → kind, for Java-like requirement messages; a ref missing here counts as a branch. */
  readonly refTypes?: Readonly<Record<string, 'branch' | 'tag'>>
  /**
   * The rest of the metadata file, held only where whole metadata is built and written (the
   * embedded catalog). The gate reads the rule-relevant parts alone and leaves it absent.
   */
  readonly data?: TableData
}

/** A wire JSON object, read only. */
export type WireObject = Readonly<Record<string, unknown>>

/**
 * The parts of table metadata no rule reads (spec "Table Metadata Fields"): snapshots, their refs
 * and logs, statistics, encryption keys. Wire objects are kept as they were read and never changed,
 * so versions of a table share them; 64-bit numbers are decimal text, never rounded.
 */
export interface TableData {
  readonly lastSequenceNumber: string
  readonly lastUpdatedMs: string
  /** v3 row lineage. */
  readonly nextRowId: string
  /** "-1" when the table has no current snapshot. */
  readonly currentSnapshotId: string
  /** The wire form of each ref (`snapshot-id`, `type` and retention settings). */
  readonly refs: Readonly<Record<string, WireObject>>
  readonly snapshots: readonly WireObject[]
  readonly statistics: readonly WireObject[]
  readonly partitionStatistics: readonly WireObject[]
  readonly snapshotLog: readonly WireObject[]
  readonly metadataLog: readonly WireObject[]
  /** Absent when the file has no `encryption-keys` member. */
  readonly encryptionKeys?: readonly WireObject[]
  /** Top-level members this model does not know (a registered file may carry some), in order. */
  readonly extra: ReadonlyArray<readonly [string, unknown]>
}

/** Table metadata with every part of the file (what a catalog stores). */
export type WholeTableMetadata = TableMetadata & { readonly data: TableData }

/** A problem found while reading wire JSON: where (JSON-path-like) and what. */
export interface ParseIssue {
  readonly at: string
  readonly message: string
}

/** Highest field id a table may use; ids above are reserved for metadata columns (spec "Reserved Field IDs"). */
export const MAX_FIELD_ID = 2147483447

/**
 * View metadata (spec "View Metadata"): schemas typed as a table's, versions and the version log
 * kept as wire objects.
 */
export interface ViewMetadata {
  readonly formatVersion: number
  readonly viewUuid?: string
  readonly location?: string
  readonly properties: Readonly<Record<string, string>>
  readonly schemas: readonly Schema[]
  /** -1 while a new view has no version yet. */
  readonly currentVersionId: number
  readonly versions: readonly WireObject[]
  readonly versionLog: readonly WireObject[]
  /** Top-level members this model does not know, in order. */
  readonly extra: ReadonlyArray<readonly [string, unknown]>
}

/** An issue found while applying updates. */
export interface ApplyIssue extends ParseIssue {
  /** The spec rule that owns the issue; the gate reports the rest as REQUEST_WELL_FORMED. */
  readonly rule?: string
  /**
   * The Java exception a catalog answers with: IllegalArgumentException (400) for an argument the
   * metadata builder refuses (its Preconditions.checkArgument; the reference server answers with
   * that type, and the Java client rethrows it as such), ValidationException (400), or
   * CommitFailedException (409: the base moved on, a retry on fresh metadata may succeed).
   * Absent for an issue found before any update applies (an unreadable request: 400 BadRequestException).
   */
  readonly exception?: 'IllegalArgumentException' | 'ValidationException' | 'CommitFailedException'
}
