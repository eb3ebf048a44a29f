/**
 * The gate agrees with the peers' own test suites where the spec does not decide otherwise.
 *
 * Each case restates a test of Apache Iceberg Java, PyIceberg, iceberg-rust, iceberg-go or
 * iceberg-cpp (cited by repository, file and test name) as a REST commit: the table the test starts
 * from becomes the base, the change it makes becomes an `add-schema` + `set-current-schema` commit,
 * and the gate judges it under `builtin:spec` (spec rules only). `expect` lists the rule ids the
 * gate must report; empty means the peer accepts the change and so must the gate. Where the gate
 * deliberately reads the spec differently from a peer, `disagrees` says how and why (docs/engines.md
 * lists them); those cases assert the gate's reading, so a change in either direction is noticed.
 */
import t from 'tap'
import { evaluateCommit } from '../../src/engine/evaluate-commit.js'
import { parseCommitBody } from '../../src/json/parse-commit-body.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import { SPEC_ONLY_SETTINGS } from '../../src/engine/rules/settings.js'

type Field = Record<string, unknown>

interface PeerCase {
  /** Repository, file and test the case restates. */
  readonly source: string
  readonly name: string
  readonly formatVersion: 1 | 2 | 3
  readonly before: readonly Field[]
  readonly identifier?: readonly number[]
  /** Partition fields of the base's spec 0: [source id, name, transform]. */
  readonly partition?: ReadonlyArray<readonly [number, string, string]>
  /** The new schema's fields, or other updates instead of a new schema. */
  readonly after: readonly Field[] | { readonly updates: readonly unknown[] }
  readonly newIdentifier?: readonly number[]
  readonly expect: readonly string[]
  readonly disagrees?: string
}

const JAVA = 'apache/iceberg'
const PY = 'apache/iceberg-python'
const RUST = 'apache/iceberg-rust'
const GO = 'apache/iceberg-go'
const CPP = 'apache/iceberg-cpp'

const f = (id: number, name: string, type: unknown, required = false, extra: Field = {}): Field => ({ id, name, required, type, ...extra })

/** Highest id anywhere in the fields (list elements and map keys/values included). */
function highest (fields: readonly Field[]): number {
  let max = 0
  const walk = (type: unknown): void => {
    if (typeof type !== 'object' || type === null) return
    const x = type as Record<string, unknown>
    if (x.type === 'struct') for (const g of x.fields as Field[]) { max = Math.max(max, g.id as number); walk(g.type) }
    if (x.type === 'list') { max = Math.max(max, x['element-id'] as number); walk(x.element) }
    if (x.type === 'map') { max = Math.max(max, x['key-id'] as number, x['value-id'] as number); walk(x.key); walk(x.value) }
  }
  walk({ type: 'struct', fields })
  return max
}

function baseOf (c: PeerCase): TableMetadata {
  const { metadata, issues } = parseTableMetadata({
    'format-version': c.formatVersion,
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    location: 's3://warehouse/db/t',
    'last-column-id': highest(c.before),
    'current-schema-id': 0,
    schemas: [{ type: 'struct', 'schema-id': 0, 'identifier-field-ids': c.identifier ?? [], fields: c.before }],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: (c.partition ?? []).map(([source, name, transform], i) => ({ 'source-id': source, 'field-id': 1000 + i, name, transform })) }],
    'last-partition-id': 999 + (c.partition?.length ?? 0),
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }]
  })
  if (metadata === undefined) throw new Error(`${c.name}: base does not parse: ${JSON.stringify(issues)}`)
  return metadata
}

/** The commit as a client sends it, read as the gate reads a body (numbers keep their text). */
function commitOf (c: PeerCase): { requirements: unknown[], updates: unknown[] } {
  const updates = 'updates' in c.after
    ? c.after.updates
    : [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, 'identifier-field-ids': c.newIdentifier ?? c.identifier ?? [], fields: c.after } }, { action: 'set-current-schema', 'schema-id': -1 }]
  const parsed = parseCommitBody(Buffer.from(JSON.stringify({ requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }], updates }).replace(/"@(-?[\d.eE+-]+)"/g, '$1')))
  if (!parsed.ok) throw new Error(parsed.message)
  return parsed.value as { requirements: unknown[], updates: unknown[] }
}

/** A number kept as written (`1.0` stays a fraction, as a client's JSON has it). */
const num = (text: string): string => `@${text}`

const CASES: PeerCase[] = [
  // ----- Java: api/src/test/java/org/apache/iceberg/TestSchema.java
  ...([1, 2, 3] as const).map((v): PeerCase => ({
    source: `${JAVA} api/src/test/java/org/apache/iceberg/TestSchema.java testSupportedWriteDefault`,
    name: `a write-default is supported on v${v}`,
    formatVersion: v,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'has_default', 'string', false, { 'write-default': '--' })],
    expect: []
  })),
  ...([1, 2] as const).map((v): PeerCase => ({
    source: `${JAVA} api/src/test/java/org/apache/iceberg/TestSchema.java testUnsupportedInitialDefault`,
    name: `a non-null initial-default is not supported on v${v}`,
    formatVersion: v,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'has_default', 'string', false, { 'initial-default': '--', 'write-default': '--' })],
    expect: ['FORMAT_VERSION_TYPES']
  })),
  {
    source: `${JAVA} api/src/test/java/org/apache/iceberg/TestSchema.java testSupportedInitialDefault`,
    name: 'a non-null initial-default is supported on v3',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'has_default', 'string', false, { 'initial-default': '--', 'write-default': '--' })],
    expect: []
  },
  ...(['timestamp_ns', 'timestamptz_ns', 'variant', 'geometry', 'geography(srid:4269, karney)'] as const).map((type): PeerCase => ({
    source: `${JAVA} api/src/test/java/org/apache/iceberg/TestSchema.java testUnsupportedTypes; ${GO} table/metadata_builder_internal_test.go TestUnsupportedTypes`,
    name: `${type} at the top, in a list and deep in structs is not supported on v2`,
    formatVersion: 2,
    before: [f(1, 'id', 'long', true)],
    after: [
      f(1, 'id', 'long', true),
      f(2, 'top', type),
      f(3, 'arr', { type: 'list', 'element-id': 4, element: type, 'element-required': true }),
      f(5, 'struct', { type: 'struct', fields: [f(6, 'inner_op', type), f(7, 'inner_req', type, true), f(8, 'struct_arr', { type: 'struct', fields: [f(9, 'deep', type)] })] }, false)
    ],
    expect: ['FORMAT_VERSION_TYPES']
  })),
  {
    source: `${JAVA} api/src/test/java/org/apache/iceberg/TestSchema.java testTypeSupported`,
    name: 'timestamp_ns is supported on v3',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'top', 'timestamp_ns')],
    expect: []
  },
  // ----- Java: core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testAddUnknown`,
    name: 'an optional unknown column may be added on v3',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'unk', 'unknown')],
    expect: []
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testAddUnknownNonNullDefault`,
    name: 'an unknown column with a non-null default is refused',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'unk', 'unknown', false, { 'initial-default': 'string!', 'write-default': 'string!' })],
    expect: ['DEFAULT_VALUE_VALID']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testAddRequiredUnknown`,
    name: 'a required unknown column is refused',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'unk', 'unknown', true)],
    expect: ['DEFAULT_VALUE_VALID', 'REQUIRED_FIELD_HAS_DEFAULT']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testAddRequiredColumnWithoutDefault`,
    name: 'a required column without a default is refused',
    formatVersion: 3,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', true), f(2, 'data', 'string', true)],
    expect: ['REQUIRED_FIELD_HAS_DEFAULT']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testAddRequiredColumnWithDefault; ${CPP} src/iceberg/test/update_schema_test.cc AddRequiredColumnWithDefaultValue`,
    name: 'a required column with both defaults is allowed on v3',
    formatVersion: 3,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', true), f(2, 'data', 'string', true, { 'initial-default': 'n/a', 'write-default': 'n/a' })],
    expect: []
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testMakeColumnOptional`,
    name: 'required -> optional is allowed',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', false)],
    expect: []
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testRequireColumn`,
    name: 'optional -> required is refused',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true), f(2, 'data', 'string')],
    after: [f(1, 'id', 'int', true), f(2, 'data', 'string', true)],
    expect: ['NULLABILITY_NOT_TIGHTENED']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testAlterMapKey / testUpdateMapKey; ${PY} tests/test_schema.py test_detect_invalid_top_level_maps`,
    name: 'a map key never changes type',
    formatVersion: 2,
    before: [f(1, 'm', { type: 'map', 'key-id': 2, key: 'string', 'value-id': 3, value: 'string', 'value-required': false })],
    after: [f(1, 'm', { type: 'map', 'key-id': 2, key: 'uuid', 'value-id': 3, value: 'string', 'value-required': false })],
    expect: ['MAP_KEY_UNCHANGED']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testDeleteIdentifierFieldColumnsFails`,
    name: 'an identifier field cannot be dropped while it is an identifier',
    formatVersion: 2,
    identifier: [1],
    before: [f(1, 'id', 'int', true), f(2, 'data', 'string')],
    after: [f(2, 'data', 'string')],
    expect: ['IDENTIFIER_FIELD_NOT_DROPPED']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testSetIdentifierFieldsFails ("not a required field")`,
    name: 'an optional field is no identifier field',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true), f(2, 'data', 'string')],
    after: [f(1, 'id', 'int', true), f(2, 'data', 'string')],
    newIdentifier: [2],
    expect: ['IDENTIFIER_FIELD_VALID']
  },
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testDeleteThenAdd; ${RUST} crates/iceberg/src/transaction/update_schema.rs test_delete_and_readd_same_name`,
    name: 'drop a column and add one of the same name under a new id',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true), f(2, 'z', 'string')],
    after: [f(1, 'id', 'int', true), f(3, 'z', 'boolean')],
    expect: []
  },
  // ----- Java: core/src/test/java/org/apache/iceberg/TestSingleValueParser.java (defaults on v3)
  ...([
    ['testInvalidDecimal', 'decimal(5, 2)', num('123.456')],
    ['testInvalidFixed', 'fixed[2]', '111ff'],
    ['testInvalidUUID', 'uuid', 'eb26bdb1-a1d8-4aa6-990e-da940875492c-abcde'],
    ['testInvalidTimestamptz', 'timestamptz', '2007-12-03T10:15:30+01:00'],
    ['testInvalidTimestamptzNano', 'timestamptz_ns', '2007-12-03T10:15:30+01:00']
  ] as const).map(([test, type, value]): PeerCase => ({
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSingleValueParser.java ${test}`,
    name: `a ${type} default of ${value.replace(/^@/, '')} is refused`,
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'v', type, false, { 'write-default': value })],
    expect: ['DEFAULT_VALUE_VALID']
  })),
  {
    source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSingleValueParser.java testValidDefaults (the primitive rows)`,
    name: 'the valid defaults of every primitive type are accepted',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [
      f(1, 'id', 'long', true),
      ...([['boolean', true], ['int', 1], ['long', 9999999], ['float', num('1.23')], ['double', num('123.456')], ['date', '2007-12-03'], ['time', '10:15:30'],
        ['timestamp', '2007-12-03T10:15:30'], ['timestamptz', '2007-12-03T10:15:30+00:00'], ['timestamp_ns', '2007-12-03T10:15:30.123456789'],
        ['timestamptz_ns', '2007-12-03T10:15:30.123456789+00:00'], ['string', 'foo'], ['uuid', 'eb26bdb1-a1d8-4aa6-990e-da940875492c'], ['fixed[2]', '111f'],
        ['binary', '0000ff'], ['decimal(9, 4)', '123.4500'], ['decimal(9, 0)', '2']] as const).map(([type, value], i) => f(i + 2, `c${i}`, type, false, { 'initial-default': value, 'write-default': value }))
    ],
    expect: []
  },
  // ----- PyIceberg: tests/test_schema.py
  {
    source: `${PY} tests/test_schema.py test_promote_float_to_double`,
    name: 'float -> double',
    formatVersion: 2,
    before: [f(1, 'aCol', 'float')],
    after: [f(1, 'aCol', 'double')],
    expect: []
  },
  {
    source: `${PY} tests/test_schema.py test_promote_int_to_long`,
    name: 'int -> long',
    formatVersion: 2,
    before: [f(1, 'aCol', 'int')],
    after: [f(1, 'aCol', 'long')],
    expect: []
  },
  {
    source: `${PY} tests/test_schema.py test_detect_invalid_promotion_string_to_float`,
    name: 'string -> float is refused',
    formatVersion: 2,
    before: [f(1, 'aCol', 'string')],
    after: [f(1, 'aCol', 'float')],
    expect: ['TYPE_PROMOTION_VALID']
  },
  {
    source: `${PY} tests/test_schema.py test_type_promote_decimal_to_fixed_scale_with_wider_precision`,
    name: 'decimal(20, 1) -> decimal(22, 1)',
    formatVersion: 2,
    before: [f(1, 'aCol', 'decimal(20, 1)')],
    after: [f(1, 'aCol', 'decimal(22, 1)')],
    expect: []
  },
  {
    source: `${PY} tests/test_schema.py test_detect_invalid_top_level_list`,
    name: 'a list element string -> double is refused',
    formatVersion: 2,
    before: [f(1, 'aList', { type: 'list', 'element-id': 2, element: 'string', 'element-required': false })],
    after: [f(1, 'aList', { type: 'list', 'element-id': 2, element: 'double', 'element-required': false })],
    expect: ['TYPE_PROMOTION_VALID']
  },
  {
    source: `${PY} tests/test_schema.py test_replace_list_with_primitive`,
    name: 'a list column cannot become a primitive',
    formatVersion: 2,
    before: [f(1, 'aCol', { type: 'list', 'element-id': 2, element: 'string', 'element-required': true })],
    after: [f(1, 'aCol', 'string')],
    expect: ['FIELD_KIND_STABLE']
  },
  {
    source: `${PY} tests/test_schema.py test_unknown_type_promotion_to_primitive`,
    name: 'unknown -> string, int, boolean, float on v3',
    formatVersion: 3,
    before: [f(1, 'a', 'unknown'), f(2, 'b', 'unknown'), f(3, 'c', 'unknown'), f(4, 'd', 'unknown')],
    after: [f(1, 'a', 'string'), f(2, 'b', 'int'), f(3, 'c', 'boolean'), f(4, 'd', 'float')],
    expect: []
  },
  ...([
    ['list', { type: 'list', 'element-id': 2, element: 'string', 'element-required': false }],
    ['map', { type: 'map', 'key-id': 2, key: 'string', 'value-id': 3, value: 'string', 'value-required': false }],
    ['struct', { type: 'struct', fields: [f(2, 'field', 'string')] }]
  ] as const).map(([kind, type]): PeerCase => ({
    source: `${PY} tests/test_schema.py test_unknown_type_promotion_to_non_primitive_raises_resolve_error ("Cannot promote unknown to ${kind}")`,
    name: `unknown -> ${kind} is refused on v3`,
    formatVersion: 3,
    before: [f(1, 'a', 'unknown')],
    after: [f(1, 'a', type)],
    expect: ['FIELD_KIND_STABLE']
  })),
  // ----- iceberg-rust
  {
    source: `${RUST} crates/iceberg/src/transaction/update_schema.rs test_add_required_column_with_initial_default`,
    name: 'a required column with an initial default on a v2 table',
    formatVersion: 2,
    before: [f(1, 'x', 'long', true), f(2, 'y', 'long', true), f(3, 'z', 'long', true)],
    after: [f(1, 'x', 'long', true), f(2, 'y', 'long', true), f(3, 'z', 'long', true), f(4, 'req_col', 'int', true, { 'initial-default': 0, 'write-default': 0 })],
    expect: ['FORMAT_VERSION_TYPES', 'REQUIRED_FIELD_HAS_DEFAULT'],
    disagrees: 'iceberg-rust\'s UpdateSchemaAction builds this on a v2 table; the spec (Appendix E) makes a non-null initial-default a v3 feature, and Java\'s catalog refuses it (Schema.checkCompatibility), so the gate refuses it before the catalog does'
  },
  {
    source: `${RUST} crates/iceberg/src/spec/table_metadata_builder.rs test_add_incompatible_current_schema_fails`,
    name: 'a schema without the partition source column',
    formatVersion: 2,
    before: [f(1, 'x', 'long', true), f(2, 'y', 'long', true)],
    partition: [[1, 'x', 'identity']],
    after: [f(2, 'y', 'long', true)],
    expect: ['PARTITION_SOURCE_NOT_DROPPED']
  },
  {
    source: `${RUST} crates/iceberg/src/spec/table_metadata_builder.rs test_schema_evolution_now_correctly_validates_partition_field_name_conflicts`,
    name: 'a new column named like a partition field',
    formatVersion: 2,
    before: [f(1, 'data', 'string', true)],
    partition: [[1, 'bucket_data', 'bucket[16]']],
    after: [f(1, 'data', 'string', true), f(2, 'bucket_data', 'int')],
    expect: ['PARTITION_NAME_NOT_TAKEN']
  },
  {
    source: `${RUST} crates/iceberg/src/spec/table_metadata_builder.rs test_active_schema_cannot_be_removed`,
    name: 'the current schema cannot be removed',
    formatVersion: 2,
    before: [f(1, 'x', 'long', true)],
    after: { updates: [{ action: 'remove-schemas', 'schema-ids': [0] }] },
    expect: ['CURRENT_SCHEMA_NOT_REMOVED']
  },
  // ----- iceberg-go
  {
    source: `${GO} table/update_schema_test.go TestUnionByNameRejectsInvalidAddedColumnDefault`,
    name: 'an int default "not-an-int" and a date default "not-a-date" are refused',
    formatVersion: 3,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', true), f(2, 'count', 'int', false, { 'initial-default': 'not-an-int' }), f(3, 'when', 'date', false, { 'write-default': 'not-a-date' })],
    expect: ['DEFAULT_VALUE_VALID']
  },
  {
    source: `${GO} table/update_schema_test.go TestUnionByNameRejectsInvalidNestedAddedColumnDefault`,
    name: 'a bad default inside a new struct and inside a map value struct',
    formatVersion: 3,
    before: [f(1, 'id', 'int', true)],
    after: [
      f(1, 'id', 'int', true),
      f(2, 'addr', { type: 'struct', fields: [f(3, 'zip', 'int', false, { 'initial-default': 'not-an-int' })] }),
      f(4, 'events', { type: 'map', 'key-id': 5, key: 'string', 'value-id': 6, 'value-required': false, value: { type: 'struct', fields: [f(7, 'when', 'date', false, { 'write-default': 'not-a-date' })] } })
    ],
    expect: ['DEFAULT_VALUE_VALID']
  },
  {
    source: `${GO} types_test.go TestDecimalTypeInvalidParse ("scale greater than precision")`,
    name: 'decimal(5,6) is not a type',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', true), f(2, 'd', 'decimal(5,6)')],
    expect: ['REQUEST_WELL_FORMED'],
    disagrees: 'Java\'s Types.DecimalType.of accepts a scale above the precision; iceberg-go and newer PyIceberg refuse it, and so does the gate: such a type has no digit left of the point'
  },
  {
    source: `${GO} types_test.go TestDecimalTypeInvalidParse ("precision zero"); ${RUST} crates/iceberg/src/spec/datatypes.rs Type::decimal`,
    name: 'decimal(0,2) is not a type',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', true), f(2, 'd', 'decimal(0,2)')],
    expect: ['REQUEST_WELL_FORMED'],
    disagrees: 'Java accepts precision 0; iceberg-go and iceberg-rust refuse it, and so does the gate'
  },
  {
    source: `${GO} types_test.go TestFixedType ("fixed[0]")`,
    name: 'fixed[0] is a type',
    formatVersion: 2,
    before: [f(1, 'id', 'int', true)],
    after: [f(1, 'id', 'int', true), f(2, 'b', 'fixed[0]')],
    expect: []
  },
  // ----- iceberg-cpp: src/iceberg/test/update_schema_test.cc
  {
    source: `${CPP} src/iceberg/test/update_schema_test.cc AddColumnWithDefaultValueRequiresV3`,
    name: 'a column added with a default on v2',
    formatVersion: 2,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'new_col', 'int', false, { 'initial-default': 42, 'write-default': 42 })],
    expect: ['FORMAT_VERSION_TYPES']
  },
  {
    source: `${CPP} src/iceberg/test/update_schema_test.cc AddColumnWithNarrowingDefaultValueFails`,
    name: 'an int default out of the int range',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'new_col', 'int', false, { 'initial-default': num('9223372036854775807'), 'write-default': num('9223372036854775807') })],
    expect: ['DEFAULT_VALUE_VALID']
  },
  {
    source: `${CPP} src/iceberg/test/update_schema_test.cc AddColumnWithDifferentScaleDecimalDefaultFails`,
    name: 'a decimal(18, 2) default with scale 3',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'new_col', 'decimal(18, 2)', false, { 'initial-default': '1.234', 'write-default': '1.234' })],
    expect: ['DEFAULT_VALUE_VALID']
  },
  {
    source: `${CPP} src/iceberg/test/update_schema_test.cc AddColumnWithWiderPrecisionDecimalDefault`,
    name: 'a decimal(18, 2) default with fewer digits than the precision',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'new_col', 'decimal(18, 2)', false, { 'initial-default': '12.34', 'write-default': '12.34' })],
    expect: []
  },
  {
    source: `${JAVA} spec "Default values" / Appendix E; ${CPP} src/iceberg/update/update_schema.cc ("must be null")`,
    name: 'a struct column defaulting to {}',
    formatVersion: 3,
    before: [f(1, 'id', 'long', true)],
    after: [f(1, 'id', 'long', true), f(2, 'point', { type: 'struct', fields: [f(3, 'x', 'int', false, { 'initial-default': 0, 'write-default': 0 })] }, false, { 'initial-default': {}, 'write-default': {} })],
    expect: [],
    disagrees: 'Java (Literals has no struct literal) and iceberg-cpp refuse any non-null struct default; the spec (Appendix E) allows {}, "a non-null struct with no field values", so the gate does'
  }
]

/**
 * Java's type-change matrix (TestSchemaUpdate#testUpdateFailure): every pair of these primitives
 * is allowed exactly when the types are equal or the pair is a promotion Java allows.
 */
const MATRIX_TYPES = ['boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamptz', 'timestamp', 'string', 'uuid', 'binary', 'fixed[3]', 'fixed[4]', 'decimal(9, 2)', 'decimal(9, 3)', 'decimal(18, 2)']
const GEO_TYPES = ['geometry', 'geometry(srid:3857)', 'geography', 'geography(srid:4269, karney)']
const JAVA_ALLOWED = new Set(['int->long', 'float->double', 'decimal(9, 2)->decimal(18, 2)'])

function judge (c: PeerCase): string[] {
  const ev = evaluateCommit({ base: baseOf(c), request: commitOf(c), settings: SPEC_ONLY_SETTINGS })
  return [...new Set(ev.findings.filter(x => x.severity === 'error').map(x => x.rule))].sort()
}

t.test('peer test cases, as REST commits judged by the gate', async t => {
  for (const c of CASES) {
    t.match(c.source, /^apache\/iceberg(-python|-rust|-go|-cpp)? .+ \S+/, `${c.name}: cites the file and test`)
    t.strictSame(judge(c), [...c.expect].sort(), `${c.name} (${c.source})${c.disagrees === undefined ? '' : ` [disagrees: ${c.disagrees}]`}`)
  }
})

t.test('Java TestSchemaUpdate#testUpdateFailure: the type-change matrix on a v2 table', async t => {
  for (const from of MATRIX_TYPES) {
    // An unchanged type is no schema change: no client sends a commit for it.
    for (const to of MATRIX_TYPES.filter(x => x !== from)) {
      const allowed = from === to || JAVA_ALLOWED.has(`${from}->${to}`)
      const c: PeerCase = { source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testUpdateFailure`, name: `${from} -> ${to}`, formatVersion: 2, before: [f(1, 'col', from, true)], after: [f(1, 'col', to, true)], expect: allowed ? [] : ['TYPE_PROMOTION_VALID'] }
      t.strictSame(judge(c), c.expect, `${from} -> ${to}: ${allowed ? 'allowed' : '"Cannot change column type: col: ' + from + ' -> ' + to + '"'}`)
    }
  }
})

t.test('Java TestSchemaUpdate#testUpdateFailure: geometry and geography on a v3 table, and the spec\'s own v3 promotions', async t => {
  for (const from of GEO_TYPES) {
    for (const to of GEO_TYPES.filter(x => x !== from)) {
      const c: PeerCase = { source: `${JAVA} core/src/test/java/org/apache/iceberg/TestSchemaUpdate.java testUpdateFailure`, name: `${from} -> ${to}`, formatVersion: 3, before: [f(1, 'col', from, true)], after: [f(1, 'col', to, true)], expect: from === to ? [] : ['TYPE_PROMOTION_VALID'] }
      t.strictSame(judge(c), c.expect, `${from} -> ${to}`)
    }
  }
  // The spec's v3 table allows date -> timestamp and timestamp_ns; Java 1.11's TypeUtil does not yet
  // (kept: the spec decides; the PROMOTION_READER_SUPPORTED platform rule warns about readers).
  for (const to of ['timestamp', 'timestamp_ns']) {
    t.strictSame(judge({ source: 'spec "Schema Evolution"', name: `date -> ${to}`, formatVersion: 3, before: [f(1, 'col', 'date', true)], after: [f(1, 'col', to, true)], expect: [] }), [], `date -> ${to} on v3: allowed by the spec`)
  }
  t.strictSame(judge({ source: 'spec "Schema Evolution"', name: 'date -> timestamptz', formatVersion: 3, before: [f(1, 'col', 'date', true)], after: [f(1, 'col', 'timestamptz', true)], expect: [] }), ['TYPE_PROMOTION_VALID'], 'date -> timestamptz: never')
})
