/**
 * A new table's metadata from a CreateTableRequest, as the reference server's create runs
 * `TableMetadata.newTableMetadata`: every field id assigned fresh from 1, partition and sort
 * sources rebound to the fresh ids, partition field ids restarting at 1000, the format version
 * taken from the `format-version` property (default 2) and not kept as a property, and
 * `write.parquet.compression-codec` set to `zstd` unless the request sets it (Java's
 * `TableMetadata.persistedProperties`: the default for tables created since Iceberg 1.4, written
 * into the table so that older writers agree). The metadata builder does the rest, so a created
 * table is what the same updates would make.
 */
import { assignFreshIds } from './fresh-ids.js'
import { TableMetadataBuilder, type ApplyIssue } from './metadata-builder.js'
import { parsePartitionSpec, parseSchemaShape, parseSortOrder, plainRecord } from './parse.js'
import type { PartitionField, SortField, WholeTableMetadata } from './types.js'

interface NewTableRequest {
  /** The request's `schema`, `partition-spec` and `write-order`, as wire JSON. */
  readonly schema: unknown
  readonly partitionSpec?: unknown
  readonly writeOrder?: unknown
  readonly location: string
  readonly properties: Readonly<Record<string, string>>
}

interface NewTableOptions {
  readonly uuid: string
  readonly now: number
}

const FORMAT_VERSION = 'format-version'
const PARQUET_COMPRESSION = 'write.parquet.compression-codec'

export function newTableMetadata (req: NewTableRequest, opts: NewTableOptions): { metadata?: WholeTableMetadata, issues: ApplyIssue[] } {
  const issues: ApplyIssue[] = []
  const properties = plainRecord<string>()
  properties[PARQUET_COMPRESSION] = 'zstd'
  let formatVersion: 1 | 2 | 3 = 2
  for (const key of Object.keys(req.properties)) {
    const value = req.properties[key] as string
    if (key !== FORMAT_VERSION) { properties[key] = value; continue }
    const v = /^\d+$/.test(value.trim()) ? Number(value) : NaN
    if (v === 1 || v === 2 || v === 3) formatVersion = v
    else issues.push({ at: `properties.${FORMAT_VERSION}`, message: `Cannot create table: unsupported format version: ${value} (supported: 1 to 3)` })
  }
  const parsed = parseSchemaShape(req.schema, 'schema', issues)
  const spec = req.partitionSpec === undefined || req.partitionSpec === null ? { fields: [] } : parsePartitionSpec(req.partitionSpec, 'partition-spec', issues)
  const order = req.writeOrder === undefined || req.writeOrder === null ? { fields: [] } : parseSortOrder(req.writeOrder, 'write-order', issues)
  if (parsed === undefined || spec === undefined || order === undefined || issues.length > 0) return { issues }

  const { schema, ids, unknownIdentifiers } = assignFreshIds(parsed)
  for (const id of unknownIdentifiers) issues.push({ at: 'schema.identifier-field-ids', message: `Cannot create table: identifier field id ${id} is not a field of the schema` })
  // Java binds partition and sort sources by column name; the fresh ids map them the same way.
  const rebind = (sourceIds: readonly number[], at: string): number[] => sourceIds.map(id => {
    const fresh = ids.get(id)
    if (fresh === undefined) issues.push({ at, message: `Cannot create table: cannot find source column ${id}` })
    return fresh ?? id
  })
  const specFields: PartitionField[] = spec.fields.map((f, i) => ({ name: f.name, transform: f.transform, sourceIds: rebind(f.sourceIds, `partition-spec.fields[${i}]`) }))
  const orderFields: SortField[] = order.fields.map((f, i) => ({ ...f, sourceIds: rebind(f.sourceIds, `write-order.fields[${i}]`) }))
  if (issues.length > 0) return { issues }

  const b = TableMetadataBuilder.fromEmpty(formatVersion, { data: true, now: opts.now })
  b.assignUuid(opts.uuid)
  b.addSchema(schema)
  b.setCurrentSchema(-1)
  b.addSpec(specFields, 'partition-spec')
  b.setDefaultSpec(-1)
  b.addSortOrder(orderFields, 'write-order')
  b.setDefaultSortOrder(-1)
  b.setLocation(req.location)
  b.setProperties(properties)
  const built = b.build({ newUuid: () => opts.uuid })
  return built.ok ? { metadata: built.metadata as WholeTableMetadata, issues: [] } : { issues: built.issues }
}
