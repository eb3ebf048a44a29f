/**
 * A JSON null in a request member, read the way the reference server reads it.
 *
 * The Java client writes unset bean members as `null` (RESTObjectMapper has no NON_NULL
 * inclusion), and the Java reference server reads them back through Jackson into the same beans
 * or through the `*Parser` classes, where an optional member read with `getXOrNull` / `hasNonNull`
 * is absent when null and a required one (`getString`, `getInt`, `JsonUtil.get`) is refused.
 * The table below walks the OpenAPI request schemas (rest-catalog-open-api.yaml: CreateTableRequest,
 * CommitTableRequest, CommitTransactionRequest, RegisterTableRequest, CreateViewRequest,
 * CommitViewRequest, every TableRequirement and TableUpdate member the gate reads, Schema,
 * StructField, ListType, MapType, PartitionSpec, PartitionField, SortOrder, SortField, ViewVersion)
 * member by member. Each row says what the spec and Java make of a null there and what the gate
 * must do: `absent` (judged and forwarded exactly as if the member were left out, bytes untouched)
 * or `refused` (a 400 naming the member, nothing forwarded).
 *
 * Where the gate deliberately differs from Java the row says why (`note`); docs/engines.md lists
 * those differences. The rows whose null the gate reads as absent are then sent through the proxy
 * to the embedded catalog, on both transports, which must accept them as well.
 */
import { fixtureMeta } from '../helpers/fault-upstream.js'
import t, { type Test } from 'tap'
import { Client } from 'undici'
import { memoryAuditSink } from '../../src/audit/audit-log.js'
import { gateCommit, type GatedKind as AnyGatedKind, type GateOutcome } from '../../src/gate/commit-gate.js'
import type { RemovalKind } from '../../src/gate/gate-types.js'

/** The writes with content members to null (drops and renames carry none, or only identifiers). */
type GatedKind = Exclude<AnyGatedKind, RemovalKind>
import { readLoadAnswer } from '../../src/gate/load-base.js'
import { needsGate } from '../../src/json/commit-scan.js'
import { SPEC_ONLY_SETTINGS } from '../../src/engine/rules/settings.js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'

const UUID = '9c12d441-03fe-4693-9a96-a0705ddf69c1'
const BIG = '3055729675574597004'

/** The table every commit row is judged against (v2; ref main at a 64-bit id). */
const BASE = {
  ...fixtureMeta(),
  'last-sequence-number': 1,
  properties: { gone: 'x' },
  'current-snapshot-id': `@${BIG}`,
  refs: { main: { 'snapshot-id': `@${BIG}`, type: 'branch' }, old: { 'snapshot-id': `@${BIG}`, type: 'tag' } }
}

/** The schema a commit or create carries: every member a field, list and map can have. */
function schemaJson (schemaId: number | undefined): Record<string, unknown> {
  return {
    type: 'struct',
    ...(schemaId === undefined ? {} : { 'schema-id': schemaId }),
    'identifier-field-ids': [1],
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'name', required: false, type: 'string', doc: 'who' },
      { id: 3, name: 'ts', required: false, type: 'timestamptz' },
      { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false } },
      { id: 6, name: 'attrs', required: false, type: { type: 'map', 'key-id': 7, key: 'string', 'value-id': 8, value: 'int', 'value-required': false } }
    ]
  }
}

/** Every member of CommitTableRequest the gate reads, each in a form the base accepts. */
function commitBody (): Record<string, unknown> {
  return {
    identifier: { namespace: ['db'], name: 't' },
    requirements: [
      { type: 'assert-table-uuid', uuid: UUID },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': `@${BIG}` },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 },
      { type: 'assert-current-schema-id', 'current-schema-id': 0 },
      { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 999 },
      { type: 'assert-default-spec-id', 'default-spec-id': 0 },
      { type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 }
    ],
    updates: [
      { action: 'upgrade-format-version', 'format-version': 2 },
      { action: 'add-schema', schema: schemaJson(1), 'last-column-id': 8 },
      { action: 'set-current-schema', 'schema-id': -1 },
      { action: 'add-spec', spec: { 'spec-id': 1, fields: [{ name: 'id_bucket', transform: 'bucket[16]', 'source-id': 1, 'field-id': 1000 }] } },
      { action: 'set-default-spec', 'spec-id': -1 },
      { action: 'add-sort-order', 'sort-order': { 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 2, direction: 'asc', 'null-order': 'nulls-first' }] } },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
      { action: 'set-properties', updates: { owner: 'spark' } },
      { action: 'remove-properties', removals: ['gone'] },
      { action: 'set-location', location: 's3://warehouse/db/t' },
      { action: 'set-snapshot-ref', 'ref-name': 'audit', 'snapshot-id': `@${BIG}`, type: 'branch', 'min-snapshots-to-keep': 1, 'max-snapshot-age-ms': 86400000, 'max-ref-age-ms': 86400000 },
      { action: 'remove-snapshot-ref', 'ref-name': 'old' },
      { action: 'assign-uuid', uuid: UUID },
      { action: 'add-snapshot', snapshot: { 'sequence-number': 2, 'snapshot-id': 7, 'timestamp-ms': 1700000000001, summary: { operation: 'append' }, 'manifest-list': 's3://warehouse/db/t/metadata/snap-7.avro', 'schema-id': 1 } },
      { action: 'remove-snapshots', 'snapshot-ids': [5] },
      { action: 'set-statistics', 'snapshot-id': `@${BIG}`, statistics: { 'snapshot-id': `@${BIG}`, 'statistics-path': 's3://warehouse/db/t/stats.puffin', 'file-size-in-bytes': 10, 'file-footer-size-in-bytes': 5, 'blob-metadata': [] } },
      { action: 'remove-statistics', 'snapshot-id': 5 },
      { action: 'set-partition-statistics', 'partition-statistics': { 'snapshot-id': `@${BIG}`, 'statistics-path': 's3://warehouse/db/t/partition-stats.parquet', 'file-size-in-bytes': 10 } },
      { action: 'remove-partition-statistics', 'snapshot-id': 5 },
      { action: 'remove-partition-specs', 'spec-ids': [] },
      { action: 'remove-schemas', 'schema-ids': [] },
      { action: 'add-encryption-key', 'encryption-key': { 'key-id': 'k1', 'encrypted-key-metadata': 'AAAA' } },
      { action: 'remove-encryption-key', 'key-id': 'k0' }
    ]
  }
}

/** A CreateTableRequest as the Java client writes it, every member set. */
function createBody (): Record<string, unknown> {
  return {
    name: 't2',
    location: 's3://warehouse/db/t2',
    schema: schemaJson(0),
    'partition-spec': { 'spec-id': 0, fields: [{ name: 'id_bucket', transform: 'bucket[16]', 'source-id': 1, 'field-id': 1000 }] },
    'write-order': { 'order-id': 1, fields: [{ transform: 'identity', 'source-id': 2, direction: 'asc', 'null-order': 'nulls-first' }] },
    properties: { owner: 'spark' },
    'stage-create': false
  }
}

function viewVersion (): Record<string, unknown> {
  return {
    'version-id': 1,
    'timestamp-ms': 1700000000000,
    'schema-id': 0,
    summary: { 'engine-name': 'spark' },
    representations: [{ type: 'sql', sql: 'select 1 as id', dialect: 'spark' }],
    'default-catalog': 'lake',
    'default-namespace': ['db']
  }
}

const viewSchema = (): Record<string, unknown> => schemaJson(0)

const bodies = {
  'create-table': createBody,
  'update-table': commitBody,
  transaction: () => ({ 'table-changes': [commitBody()] }),
  'register-table': () => ({ name: 't3', 'metadata-location': 's3://warehouse/db/t/metadata/00001.metadata.json', overwrite: false }),
  'register-view': () => ({ name: 'v3', 'metadata-location': 's3://warehouse/db/v/metadata/00001.metadata.json' }),
  'create-view': () => ({ name: 'v', location: 's3://warehouse/db/v', schema: viewSchema(), 'view-version': viewVersion(), properties: {} }),
  'update-view': () => ({
    identifier: { namespace: ['db'], name: 'v' },
    requirements: [{ type: 'assert-view-uuid', uuid: UUID }],
    updates: [
      { action: 'add-schema', schema: viewSchema() },
      { action: 'add-view-version', 'view-version': { ...viewVersion(), 'schema-id': -1 } },
      { action: 'set-current-view-version', 'view-version-id': -1 },
      { action: 'assign-uuid', uuid: UUID },
      { action: 'upgrade-format-version', 'format-version': 1 },
      { action: 'set-location', location: 's3://warehouse/db/v' },
      { action: 'set-properties', updates: { comment: 'c' } },
      { action: 'remove-properties', removals: ['gone'] }
    ]
  })
} satisfies Record<GatedKind, () => Record<string, unknown>>

interface Row {
  readonly kind: GatedKind
  /** JSON Pointer of the member set to null. */
  readonly member: string
  readonly spec: 'required' | 'optional'
  /** How Java's reference server reads a null there, and where. */
  readonly java: string
  /**
   * absent: judged as if left out, forwarded as sent. refused: a 400 naming it. unjudged: the body
   * then holds no `action` at all, so the fast scan forwards it untouched (nothing in it can change
   * a schema) and the upstream's own parser answers, as it does for every data-only commit.
   */
  readonly gate: 'absent' | 'refused' | 'unjudged'
  /** Why the gate differs from Java, when it does. */
  readonly note?: string
}

const opt = (kind: GatedKind, member: string, java: string, note?: string): Row => ({ kind, member, spec: 'optional', java, gate: 'absent', ...(note === undefined ? {} : { note }) })
const req = (kind: GatedKind, member: string, java: string): Row => ({ kind, member, spec: 'required', java, gate: 'refused' })
/** Required, but with it null the body holds no action: the scan forwards it (see Row.gate). */
const unjudged = (kind: GatedKind, member: string, java: string): Row => ({ kind, member, spec: 'required', java, gate: 'unjudged' })
/** Optional in the OpenAPI, but Java's parser refuses a null there: the gate refuses it too. */
const javaRefuses = (kind: GatedKind, member: string, java: string): Row => ({ kind, member, spec: 'optional', java, gate: 'refused' })

/** Schema, StructField, ListType and MapType members, below `at` (a schema) in a body of `kind`. */
function schemaRows (kind: GatedKind, at: string): Row[] {
  return [
    req(kind, `${at}/type`, 'SchemaParser.typeFromJson: "Cannot parse type from json: null"'),
    req(kind, `${at}/fields`, 'SchemaParser.structFromJson: JsonUtil.get("fields")'),
    opt(kind, `${at}/schema-id`, 'SchemaParser.fromJson: JsonUtil.getIntOrNull'),
    opt(kind, `${at}/identifier-field-ids`, 'SchemaParser.fromJson: JsonUtil.getIntegerSetOrNull'),
    req(kind, `${at}/fields/0/id`, 'SchemaParser.structFromJson: JsonUtil.getInt'),
    req(kind, `${at}/fields/0/name`, 'SchemaParser.structFromJson: JsonUtil.getString'),
    req(kind, `${at}/fields/0/required`, 'SchemaParser.structFromJson: JsonUtil.getBool'),
    req(kind, `${at}/fields/0/type`, 'SchemaParser.structFromJson: JsonUtil.get("type")'),
    opt(kind, `${at}/fields/1/doc`, 'SchemaParser.structFromJson: JsonUtil.getStringOrNull'),
    opt(kind, `${at}/fields/1/initial-default`, 'SchemaParser.defaultFromJson: null reaches Expressions.lit, which throws (the server answers 500)',
      'spec "Default values": a default that is not set is null; the gate reads a null default as none'),
    opt(kind, `${at}/fields/1/write-default`, 'SchemaParser.defaultFromJson: null reaches Expressions.lit, which throws (the server answers 500)',
      'spec "Default values": a default that is not set is null; the gate reads a null default as none'),
    req(kind, `${at}/fields/3/type/element-id`, 'SchemaParser.listFromJson: JsonUtil.getInt'),
    req(kind, `${at}/fields/3/type/element`, 'SchemaParser.listFromJson: JsonUtil.get'),
    req(kind, `${at}/fields/3/type/element-required`, 'SchemaParser.listFromJson: JsonUtil.getBool'),
    req(kind, `${at}/fields/4/type/key-id`, 'SchemaParser.mapFromJson: JsonUtil.getInt'),
    req(kind, `${at}/fields/4/type/key`, 'SchemaParser.mapFromJson: JsonUtil.get'),
    req(kind, `${at}/fields/4/type/value-id`, 'SchemaParser.mapFromJson: JsonUtil.getInt'),
    req(kind, `${at}/fields/4/type/value`, 'SchemaParser.mapFromJson: JsonUtil.get'),
    req(kind, `${at}/fields/4/type/value-required`, 'SchemaParser.mapFromJson: JsonUtil.getBool')
  ]
}

function specRows (kind: GatedKind, at: string): Row[] {
  return [
    javaRefuses(kind, `${at}/spec-id`, 'PartitionSpecParser.fromJson: JsonUtil.getInt'),
    req(kind, `${at}/fields`, 'PartitionSpecParser.fromJson: JsonUtil.get("fields")'),
    req(kind, `${at}/fields/0/name`, 'PartitionSpecParser.buildFromJsonFields: JsonUtil.getString'),
    req(kind, `${at}/fields/0/transform`, 'PartitionSpecParser.buildFromJsonFields: JsonUtil.getString'),
    req(kind, `${at}/fields/0/source-id`, 'PartitionSpecParser.buildFromJsonFields: JsonUtil.getInt'),
    javaRefuses(kind, `${at}/fields/0/field-id`, 'PartitionSpecParser.buildFromJsonFields: has("field-id") then JsonUtil.getInt')
  ]
}

function orderRows (kind: GatedKind, at: string): Row[] {
  return [
    req(kind, `${at}/order-id`, 'SortOrderParser.fromJson: JsonUtil.getInt'),
    req(kind, `${at}/fields`, 'SortOrderParser.fromJson: JsonUtil.get("fields")'),
    req(kind, `${at}/fields/0/transform`, 'SortOrderParser.buildFromJsonFields: JsonUtil.getString'),
    req(kind, `${at}/fields/0/source-id`, 'SortOrderParser.buildFromJsonFields: JsonUtil.getInt'),
    req(kind, `${at}/fields/0/direction`, 'SortOrderParser.buildFromJsonFields: JsonUtil.getString'),
    req(kind, `${at}/fields/0/null-order`, 'SortOrderParser.buildFromJsonFields: JsonUtil.getString')
  ]
}

/** CommitTableRequest members below `at` (the request object inside the body). */
function commitRows (kind: 'update-table' | 'transaction', at: string): Row[] {
  const u = (i: number): string => `${at}/updates/${i}`
  return [
    ...(kind === 'update-table'
      ? [opt(kind, `${at}/identifier`, 'UpdateTableRequestParser.fromJson: hasNonNull("identifier")')]
      : [req(kind, `${at}/identifier`, 'CommitTransactionRequest.validate: "Invalid table changes: table identifier is required"')]),
    req(kind, `${at}/identifier/namespace`, 'TableIdentifierParser.fromJson reads null as the empty namespace; the spec requires one'),
    req(kind, `${at}/identifier/name`, 'TableIdentifierParser.fromJson: JsonUtil.getString'),
    req(kind, `${at}/requirements`, 'UpdateTableRequestParser reads null as no requirements; the spec requires the member'),
    unjudged(kind, `${at}/updates`, 'UpdateTableRequestParser reads null as no updates; the spec requires the member'),
    req(kind, `${at}/requirements/0/type`, 'UpdateRequirementParser.fromJson: hasNonNull("type")'),
    req(kind, `${at}/requirements/0/uuid`, 'UpdateRequirementParser.readAssertTableUUID: JsonUtil.getString'),
    req(kind, `${at}/requirements/1/ref`, 'UpdateRequirementParser.readAssertRefSnapshotId: JsonUtil.getString'),
    req(kind, `${at}/requirements/2/last-assigned-field-id`, 'UpdateRequirementParser: JsonUtil.getInt'),
    req(kind, `${at}/requirements/3/current-schema-id`, 'UpdateRequirementParser: JsonUtil.getInt'),
    req(kind, `${at}/requirements/4/last-assigned-partition-id`, 'UpdateRequirementParser: JsonUtil.getInt'),
    req(kind, `${at}/requirements/5/default-spec-id`, 'UpdateRequirementParser: JsonUtil.getInt'),
    req(kind, `${at}/requirements/6/default-sort-order-id`, 'UpdateRequirementParser: JsonUtil.getInt'),
    req(kind, `${u(0)}/action`, 'MetadataUpdateParser.fromJson: hasNonNull("action")'),
    req(kind, `${u(0)}/format-version`, 'MetadataUpdateParser.readUpgradeFormatVersion: JsonUtil.getInt'),
    req(kind, `${u(1)}/schema`, 'MetadataUpdateParser.readAddSchema: JsonUtil.get'),
    opt(kind, `${u(1)}/last-column-id`, 'MetadataUpdateParser.readAddSchema never reads it (deprecated)'),
    ...schemaRows(kind, `${u(1)}/schema`),
    req(kind, `${u(2)}/schema-id`, 'MetadataUpdateParser.readSetCurrentSchema: JsonUtil.getInt'),
    req(kind, `${u(3)}/spec`, 'MetadataUpdateParser.readAddPartitionSpec: JsonUtil.get'),
    ...specRows(kind, `${u(3)}/spec`),
    req(kind, `${u(4)}/spec-id`, 'MetadataUpdateParser.readSetDefaultPartitionSpec: JsonUtil.getInt'),
    req(kind, `${u(5)}/sort-order`, 'MetadataUpdateParser.readAddSortOrder: JsonUtil.get'),
    ...orderRows(kind, `${u(5)}/sort-order`),
    req(kind, `${u(6)}/sort-order-id`, 'MetadataUpdateParser.readSetDefaultSortOrder: JsonUtil.getInt'),
    req(kind, `${u(7)}/updates`, 'MetadataUpdateParser.readSetProperties: JsonUtil.getStringMap'),
    req(kind, `${u(7)}/updates/owner`, 'JsonUtil.getStringMap: getString per value'),
    req(kind, `${u(8)}/removals`, 'MetadataUpdateParser.readRemoveProperties: JsonUtil.getStringSet'),
    req(kind, `${u(9)}/location`, 'MetadataUpdateParser.readSetLocation: JsonUtil.getString'),
    req(kind, `${u(10)}/ref-name`, 'MetadataUpdateParser.readSetSnapshotRef: JsonUtil.getString'),
    req(kind, `${u(10)}/snapshot-id`, 'MetadataUpdateParser.readSetSnapshotRef: JsonUtil.getLong'),
    req(kind, `${u(10)}/type`, 'MetadataUpdateParser.readSetSnapshotRef: JsonUtil.getString'),
    opt(kind, `${u(10)}/min-snapshots-to-keep`, 'MetadataUpdateParser.readSetSnapshotRef: JsonUtil.getIntOrNull'),
    opt(kind, `${u(10)}/max-snapshot-age-ms`, 'MetadataUpdateParser.readSetSnapshotRef: JsonUtil.getLongOrNull'),
    opt(kind, `${u(10)}/max-ref-age-ms`, 'MetadataUpdateParser.readSetSnapshotRef: JsonUtil.getLongOrNull'),
    req(kind, `${u(11)}/ref-name`, 'MetadataUpdateParser.readRemoveSnapshotRef: JsonUtil.getString'),
    req(kind, `${u(12)}/uuid`, 'MetadataUpdateParser.readAssignUUID: JsonUtil.getString'),
    req(kind, `${u(13)}/snapshot`, 'MetadataUpdateParser.readAddSnapshot: JsonUtil.get'),
    req(kind, `${u(14)}/snapshot-ids`, 'MetadataUpdateParser.readRemoveSnapshots: getLongSetOrNull, then "must be non-null"'),
    opt(kind, `${u(15)}/snapshot-id`, 'MetadataUpdateParser.readSetStatistics never reads the deprecated snapshot-id'),
    req(kind, `${u(15)}/statistics`, 'MetadataUpdateParser.readSetStatistics: JsonUtil.get'),
    req(kind, `${u(16)}/snapshot-id`, 'MetadataUpdateParser.readRemoveStatistics: JsonUtil.getLong'),
    req(kind, `${u(17)}/partition-statistics`, 'MetadataUpdateParser.readSetPartitionStatistics: JsonUtil.get'),
    req(kind, `${u(18)}/snapshot-id`, 'MetadataUpdateParser.readRemovePartitionStatistics: JsonUtil.getLong'),
    req(kind, `${u(19)}/spec-ids`, 'MetadataUpdateParser.readRemovePartitionSpecs: JsonUtil.getIntegerSet'),
    req(kind, `${u(20)}/schema-ids`, 'MetadataUpdateParser.readRemoveSchemas: JsonUtil.getIntegerSet'),
    req(kind, `${u(21)}/encryption-key`, 'MetadataUpdateParser.readAddEncryptionKey: "must be non-null object"'),
    req(kind, `${u(22)}/key-id`, 'MetadataUpdateParser.readRemoveEncryptionKey: JsonUtil.getString')
  ]
}

const ROWS: readonly Row[] = [
  req('create-table', '/name', 'CreateTableRequest.validate: "Invalid table name: null"'),
  opt('create-table', '/location', 'CreateTableRequest bean (Jackson): location stays null; CatalogHandlers picks the default location'),
  req('create-table', '/schema', 'CreateTableRequest.validate: "Invalid schema: null"'),
  opt('create-table', '/partition-spec', 'CreateTableRequest.spec(): null means unpartitioned'),
  opt('create-table', '/write-order', 'CreateTableRequest.writeOrder(): null means unsorted'),
  opt('create-table', '/properties', 'CreateTableRequest.properties(): null means no properties'),
  javaRefuses('create-table', '/stage-create', 'CreateTableRequest.validate: "Invalid stageCreate flag: null"'),
  ...schemaRows('create-table', '/schema'),
  ...specRows('create-table', '/partition-spec'),
  ...orderRows('create-table', '/write-order'),
  ...commitRows('update-table', ''),
  unjudged('transaction', '/table-changes', 'CommitTransactionRequestParser.fromJson: JsonUtil.get("table-changes")'),
  ...commitRows('transaction', '/table-changes/0'),
  req('register-table', '/name', 'RegisterTableRequestParser.fromJson: JsonUtil.getString'),
  req('register-table', '/metadata-location', 'RegisterTableRequestParser.fromJson: JsonUtil.getString'),
  req('register-view', '/name', 'RegisterViewRequestParser.fromJson: JsonUtil.getString'),
  req('register-view', '/metadata-location', 'RegisterViewRequestParser.fromJson: JsonUtil.getString'),
  opt('register-table', '/overwrite', 'RegisterTableRequestParser.fromJson: JsonUtil.getBoolOrNull (iceberg-rust writes "overwrite": null)'),
  req('create-view', '/name', 'CreateViewRequestParser.fromJson: JsonUtil.getString'),
  opt('create-view', '/location', 'CreateViewRequestParser.fromJson: JsonUtil.getStringOrNull'),
  req('create-view', '/schema', 'CreateViewRequestParser.fromJson: JsonUtil.get("schema")'),
  req('create-view', '/view-version', 'CreateViewRequestParser.fromJson: JsonUtil.get("view-version")'),
  req('create-view', '/properties', 'CreateViewRequestParser.fromJson: has("properties") then JsonUtil.getStringMap'),
  req('create-view', '/view-version/version-id', 'ViewVersionParser.fromJson: JsonUtil.getInt'),
  req('create-view', '/view-version/timestamp-ms', 'ViewVersionParser.fromJson: JsonUtil.getLong'),
  req('create-view', '/view-version/summary', 'ViewVersionParser.fromJson: JsonUtil.getStringMap'),
  req('create-view', '/view-version/representations', 'ViewVersionParser.fromJson: JsonUtil.get'),
  req('create-view', '/view-version/default-namespace', 'ViewVersionParser.fromJson: JsonUtil.get'),
  opt('create-view', '/view-version/default-catalog', 'ViewVersionParser.fromJson: JsonUtil.getStringOrNull'),
  ...schemaRows('create-view', '/schema'),
  opt('update-view', '/identifier', 'UpdateTableRequestParser.fromJson: hasNonNull("identifier")'),
  opt('update-view', '/requirements', 'UpdateTableRequestParser.fromJson: hasNonNull("requirements") (optional in CommitViewRequest)'),
  unjudged('update-view', '/updates', 'CommitViewRequest requires updates'),
  req('update-view', '/requirements/0/uuid', 'UpdateRequirementParser.readAssertViewUUID: JsonUtil.getString'),
  req('update-view', '/updates/1/view-version', 'MetadataUpdateParser.readAddViewVersion: JsonUtil.get'),
  req('update-view', '/updates/1/view-version/schema-id', 'ViewVersionParser.fromJson: JsonUtil.getInt'),
  req('update-view', '/updates/1/view-version/version-id', 'ViewVersionParser.fromJson: JsonUtil.getInt'),
  opt('update-view', '/updates/1/view-version/default-catalog', 'ViewVersionParser.fromJson: JsonUtil.getStringOrNull'),
  req('update-view', '/updates/2/view-version-id', 'MetadataUpdateParser.readCurrentViewVersionId: JsonUtil.getInt'),
  req('update-view', '/updates/3/uuid', 'MetadataUpdateParser.readAssignUUID: JsonUtil.getString'),
  req('update-view', '/updates/4/format-version', 'MetadataUpdateParser.readUpgradeFormatVersion: JsonUtil.getInt'),
  req('update-view', '/updates/5/location', 'MetadataUpdateParser.readSetLocation: JsonUtil.getString'),
  req('update-view', '/updates/6/updates', 'MetadataUpdateParser.readSetProperties: JsonUtil.getStringMap'),
  req('update-view', '/updates/7/removals', 'MetadataUpdateParser.readRemoveProperties: JsonUtil.getStringSet')
]

/** Segments of a JSON Pointer (RFC 6901). */
function segments (pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** A copy of `doc` with the member at `pointer` set to null (`value: undefined` deletes it). */
function withMember (doc: Record<string, unknown>, pointer: string, value: null | undefined): Record<string, unknown> {
  const copy = structuredClone(doc)
  const path = segments(pointer)
  let cur: unknown = copy
  for (const key of path.slice(0, -1)) {
    const next = (cur as Record<string, unknown>)[key]
    if (next === undefined) throw new Error(`no member ${key} on the way to ${pointer}`)
    cur = next
  }
  const last = path.at(-1) as string
  const parent = cur as Record<string, unknown>
  // A member the template leaves out (a default on a v2 table) is added, as null.
  if (!Object.hasOwn(parent, last) && (value === undefined || Array.isArray(parent))) throw new Error(`no member ${pointer} in the body`)
  if (value === undefined) {
    if (Array.isArray(parent)) throw new Error(`cannot remove an array element: ${pointer}`)
    delete parent[last]
  } else {
    parent[last] = value
  }
  return copy
}

/** Body text, with `"@<digits>"` strings written as bare 64-bit numbers. */
function text (doc: unknown): string {
  return JSON.stringify(doc).replace(/"@(\d+)"/g, '$1')
}

interface Run {
  readonly outcome: GateOutcome
  readonly forwarded: Buffer[]
}

const LOADED = Buffer.from(`{"metadata-location":"s3://warehouse/db/t/metadata/00001.metadata.json","metadata":${text(BASE)},"config":{}}`)

async function judge (kind: GatedKind, body: string): Promise<Run> {
  const forwarded: Buffer[] = []
  const outcome = await gateCommit({
    kind,
    ident: { namespace: ['db'], ...(kind === 'update-table' ? { table: 't' } : kind === 'update-view' ? { table: 'v' } : {}) },
    rawBody: Buffer.from(body),
    headers: {},
    requestId: 'r'
  }, {
    loadTable: async () => readLoadAnswer({ statusCode: 200, headers: {}, body: LOADED }),
    forward: async b => { forwarded.push(b); return { statusCode: 200, headers: {}, body: Buffer.from('{}') } },
    settingsFor: () => SPEC_ONLY_SETTINGS,
    audit: memoryAuditSink(),
    config: { assertions: 'inject', retryAfter: 1 }
  })
  return { outcome, forwarded }
}

function describe (o: GateOutcome): string {
  return o.type === 'answer' ? `${o.answer.statusCode}: ${o.answer.body.error.message}` : `forwarded (${o.response.statusCode})`
}

t.test('every template is accepted as it stands', async t => {
  for (const [kind, body] of Object.entries(bodies)) {
    const run = await judge(kind as GatedKind, text(body()))
    t.equal(run.outcome.type, 'upstream', `${kind}: ${describe(run.outcome)}`)
    t.equal(run.forwarded.length, 1, `${kind}: forwarded once`)
  }
})

t.test('a null member: absent where the member is optional, a 400 naming it where it is required', async t => {
  for (const row of ROWS) {
    await t.test(`${row.kind} ${row.member}: ${row.gate} (${row.spec}; Java: ${row.java})`, async t => {
      const template = bodies[row.kind]()
      const nulled = text(withMember(template, row.member, null))
      const run = await judge(row.kind, nulled)
      const name = segments(row.member).at(-1) as string
      if (row.gate === 'unjudged') {
        t.notOk(needsGate(Buffer.from(nulled)), 'no action left in the body: the scan forwards it')
        t.equal(run.forwarded[0]?.toString(), nulled, 'untouched, for the upstream to answer')
        return
      }
      if (row.gate === 'refused') {
        t.equal(run.outcome.type, 'answer', describe(run.outcome))
        if (run.outcome.type !== 'answer') return
        t.equal(run.outcome.answer.statusCode, 400, 'a 400: the client gives up cleanly')
        t.equal(run.outcome.answer.body.error.code, 400)
        t.match(run.outcome.answer.body.error.message, name, `the message names ${name}`)
        t.match(run.outcome.answer.body.error.message, /^Cannot /, 'Cannot <verb> <subject>: <detail>')
        t.same(run.forwarded, [], 'nothing reached the upstream')
        return
      }
      t.equal(run.outcome.type, 'upstream', describe(run.outcome))
      t.equal(run.forwarded.length, 1, 'forwarded once')
      t.equal(run.forwarded[0]?.toString(), nulled, 'the bytes as sent, null included')
      // Judged exactly as the body without the member (where it can be left out).
      const parent = segments(row.member).slice(0, -1).reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], template) as Record<string, unknown>
      if (!Array.isArray(parent)) {
        const left = Object.hasOwn(parent, segments(row.member).at(-1) as string) ? withMember(template, row.member, undefined) : template
        const without = await judge(row.kind, text(left))
        t.equal(describe(run.outcome), describe(without.outcome), 'the same decision as with the member left out')
      }
    })
  }
})

t.test('assert-ref-snapshot-id: a null or missing snapshot-id means "the ref must not exist"', async t => {
  for (const member of [null, undefined]) {
    const body = commitBody()
    const ref = (body.requirements as Array<Record<string, unknown>>)[1] as Record<string, unknown>
    if (member === null) ref['snapshot-id'] = null
    else delete ref['snapshot-id']
    const exists = await judge('update-table', text(body))
    t.equal(exists.outcome.type === 'answer' ? exists.outcome.answer.statusCode : 0, 409, `${String(member)}: main exists, so a 409`)
    if (exists.outcome.type === 'answer') t.match(exists.outcome.answer.body.error.message, /main was created concurrently/)
    ref.ref = 'fresh'
    const absent = await judge('update-table', text(body))
    t.equal(absent.outcome.type, 'upstream', `${String(member)}: a new ref passes (${describe(absent.outcome)})`)
  }
})

t.test('the fast scan agrees: a null member outside `action` changes nothing, a null action needs the gate', async t => {
  const data = (extra: string): Buffer => Buffer.from(`{"identifier":null,"requirements":null,"updates":[{"action":"set-properties","updates":{"a":"b"}${extra}}]}`)
  t.notOk(needsGate(data('')), 'nulls beside data actions: forwarded untouched, as the upstream reads them')
  t.notOk(needsGate(data(',"x":null')))
  t.ok(needsGate(Buffer.from('{"requirements":[],"updates":[{"action":null}]}')), 'a null action goes to the gate')
  const refused = await judge('update-table', '{"requirements":[],"updates":[{"action":null}]}')
  t.equal(refused.outcome.type === 'answer' ? refused.outcome.answer.statusCode : 0, 400, 'which refuses it')
  // Duplicate keys: Jackson keeps the last, other parsers the first or fail; the gate refuses the
  // body, and the scan only forwards one whose every `action` is a data action, whichever copy wins.
  t.ok(needsGate(Buffer.from('{"updates":[{"action":"set-properties","action":"add-schema"}]}')), 'a schema action in either copy: gated')
  const dup = await judge('update-table', '{"requirements":[],"updates":[{"action":"add-schema","action":"set-properties","updates":{}}]}')
  t.equal(dup.outcome.type === 'answer' ? dup.outcome.answer.statusCode : 0, 400, 'a duplicate key in a gated body is a 400')
  if (dup.outcome.type === 'answer') t.match(dup.outcome.answer.body.error.message, /duplicate key "action"/)
})

onEveryTransport(t, t => {
  /** The rows whose null the gate reads as absent, on a real embedded catalog behind the proxy. */
  async function throughCatalog (t: Test, transport: 'fresh' | 'keep-alive'): Promise<void> {
    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, { upstream: catalog.url })
    let client = new Client(proxy.url)
    t.teardown(() => client.close())
    const send = async (method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number, json: Record<string, unknown> }> => {
      if (transport === 'fresh') {
        await client.close()
        client = new Client(proxy.url)
      }
      const res = await client.request({ method, path, ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }) })
      const raw = await res.body.text()
      // Plain numbers are enough here: the catalog's ids are small, and the bodies are rebuilt as text.
      return { status: res.statusCode, json: raw === '' ? {} : JSON.parse(raw) as Record<string, unknown> }
    }
    if (transport === 'keep-alive') t.equal((await send('GET', '/v1/config')).status, 200, 'the connection begins with GET /v1/config')
    t.equal((await send('POST', '/v1/namespaces', '{"namespace":["db"],"properties":{}}')).status, 200)

    let n = 0
    for (const row of ROWS.filter(r => r.gate === 'absent' && r.kind === 'create-table')) {
      const body = withMember({ ...createBody(), name: `c${++n}`, location: null }, row.member, null)
      const res = await send('POST', '/v1/namespaces/db/tables', text(body))
      t.equal(res.status, 200, `createTable with ${row.member} null: ${JSON.stringify(res.json).slice(0, 200)}`)
    }
    const created = await send('POST', '/v1/namespaces/db/tables', text({ ...createBody(), name: 't', location: null, properties: null }))
    t.equal(created.status, 200, 'the table to commit to')
    const metadata = created.json.metadata as Record<string, unknown>
    const uuid = metadata['table-uuid'] as string
    for (const row of ROWS.filter(r => r.gate === 'absent' && r.kind === 'update-table')) {
      const load = await send('GET', '/v1/namespaces/db/tables/t')
      const meta = load.json.metadata as Record<string, unknown>
      const current = Number(meta['current-schema-id'])
      const last = Number(meta['last-column-id'])
      // The catalog assigned fresh ids on create: evolve the schema it holds (doc on field 2 kept).
      const schemas = meta.schemas as Array<{ 'schema-id': unknown, fields: Array<Record<string, unknown>> }>
      const fields = structuredClone(schemas.find(x => Number(x['schema-id']) === current)?.fields ?? [])
      fields.push({ id: last + 1, name: `c${last + 1}`, required: false, type: 'int' })
      const commit: Record<string, unknown> = {
        identifier: { namespace: ['db'], name: 't' },
        requirements: [{ type: 'assert-table-uuid', uuid }, { type: 'assert-current-schema-id', 'current-schema-id': current }, { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': last }],
        updates: [
          { action: 'add-schema', schema: { ...schemaJson(current + 1), fields }, 'last-column-id': last + 1 },
          { action: 'set-current-schema', 'schema-id': -1 },
          {
            action: 'add-snapshot',
            snapshot: { 'snapshot-id': ++n, 'sequence-number': Number(meta['last-sequence-number']) + 1, 'timestamp-ms': 1700000000000 + n, summary: { operation: 'append' }, 'manifest-list': `s3://warehouse/db/t/metadata/snap-${n}.avro`, 'schema-id': current + 1 }
          },
          { action: 'set-snapshot-ref', 'ref-name': 'audit', 'snapshot-id': n, type: 'branch', 'min-snapshots-to-keep': 1, 'max-snapshot-age-ms': 86400000, 'max-ref-age-ms': 86400000 }
        ]
      }
      // The row's pointer, moved onto this smaller body (schema members live in updates[0]).
      const member = row.member.replace(/^\/updates\/1\//, '/updates/0/').replace(/^\/updates\/10\//, '/updates/3/')
      let nulled: Record<string, unknown>
      try {
        nulled = withMember(commit, member, null)
      } catch {
        continue
      }
      const res = await send('POST', '/v1/namespaces/db/tables/t', text(nulled))
      t.equal(res.status, 200, `updateTable with ${member} null: ${JSON.stringify(res.json).slice(0, 300)}`)
    }

    const registered = await send('POST', '/v1/namespaces/db/register', text({ name: 'r', 'metadata-location': created.json['metadata-location'], overwrite: null }))
    t.equal(registered.status, 200, `registerTable with overwrite null: ${JSON.stringify(registered.json).slice(0, 200)}`)
    const view = await send('POST', '/v1/namespaces/db/views', text({ ...bodies['create-view'](), location: null, 'view-version': { ...viewVersion(), 'default-catalog': null } }))
    t.equal(view.status, 200, `createView with location and default-catalog null: ${JSON.stringify(view.json).slice(0, 200)}`)
    const viewUuid = (view.json.metadata as Record<string, unknown> | undefined)?.['view-uuid']
    const replaced = await send('POST', '/v1/namespaces/db/views/v', text({
      identifier: null,
      requirements: null,
      updates: [{ action: 'add-schema', schema: viewSchema() }, { action: 'add-view-version', 'view-version': { ...viewVersion(), 'version-id': 2, 'schema-id': -1, 'default-catalog': null } }, { action: 'set-current-view-version', 'view-version-id': -1 }]
    }))
    t.equal(replaced.status, 200, `replaceView with identifier and requirements null (view ${String(viewUuid)}): ${JSON.stringify(replaced.json).slice(0, 200)}`)
  }

  t.test('the embedded catalog accepts the nulls the gate reads as absent (a fresh connection per request)', async t => {
    await throughCatalog(t, 'fresh')
  })

  t.test('the embedded catalog accepts the nulls the gate reads as absent (one kept-alive connection)', async t => {
    await throughCatalog(t, 'keep-alive')
  })
})
