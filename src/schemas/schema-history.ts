/**
 * `GET /admin/v1/namespaces/{ns}/tables/{table}/schemas`: every schema of a table with its diff
 * from the one before, and the lineage of every field id. A field's id is its identity and its
 * name a label (spec "Schema Evolution"), so lineage follows ids: the names an id carried, the
 * schema that introduced it and the one that dropped it. Names that dropped columns left behind
 * are the ones a later add can silently reuse (the drop-then-add trap).
 */
import { Type, type Static } from '@sinclair/typebox'
import { diffSchemas } from '../engine/diff/schema-diff.js'
import { summarizeChanges } from '../engine/diff/summary.js'
import { schemaToJson, typeToString } from '../iceberg/print.js'
import { indexSchema } from '../iceberg/schema-index.js'
import type { IcebergType, Schema, TableMetadata } from '../iceberg/types.js'
import { changeToWire, SchemaChangeSchema } from './change.js'
import { SchemaJsonSchema, TableIdentifierSchema, type TableIdentifier } from './iceberg-rest.js'
import { ref } from './ref.js'

export const SchemaVersionSchema = Type.Object({
  'schema-id': Type.Integer(),
  'previous-schema-id': Type.Optional(Type.Integer({ description: 'The schema before this one in the table\'s list; absent for the first.' })),
  current: Type.Boolean({ description: 'Whether this is the table\'s current schema.' }),
  schema: ref(SchemaJsonSchema),
  changes: Type.Array(ref(SchemaChangeSchema), { description: 'Changes from the previous schema, by field id.' }),
  summary: Type.String()
}, { $id: 'SchemaVersion', additionalProperties: false })

export const FieldLineageSchema = Type.Object({
  'field-id': Type.Integer(),
  names: Type.Array(Type.String(), { description: 'Every full path the id carried, oldest first.' }),
  type: Type.String({ description: 'Type in the last schema that has the field.' }),
  'added-in-schema-id': Type.Integer(),
  'dropped-in-schema-id': Type.Optional(Type.Integer({ description: 'First schema without the field after its last appearance; absent while the last schema has it.' })),
  'in-current-schema': Type.Boolean()
}, { $id: 'FieldLineage', additionalProperties: false })

export const DroppedNameSchema = Type.Object({
  name: Type.String({ description: 'Full path the dropped field last had.' }),
  'field-id': Type.Integer(),
  'dropped-in-schema-id': Type.Integer(),
  'reused-by-field-id': Type.Optional(Type.Integer({ description: 'A live field with another id that now carries the name.' }))
}, { $id: 'DroppedName', additionalProperties: false })

export const SchemaHistorySchema = Type.Object({
  table: ref(TableIdentifierSchema),
  'format-version': Type.Integer(),
  'current-schema-id': Type.Integer(),
  'last-column-id': Type.Integer(),
  schemas: Type.Array(ref(SchemaVersionSchema), { description: 'One page of the schemas, in the order the table lists them (the order they were added).' }),
  'next-page-token': Type.Optional(Type.String({ description: 'Opaque token of the next page of schemas (as `pageToken`); absent on the last page.' })),
  lineage: Type.Array(ref(FieldLineageSchema), { description: 'One entry per field id ever used, by id (the whole history, on every page).' }),
  'dropped-names': Type.Array(ref(DroppedNameSchema), { description: 'The whole history, on every page.' })
}, { $id: 'SchemaHistory', additionalProperties: false })

/** Schemas per page when the caller gives no `pageSize`, and the most a caller may ask for. */
const SCHEMA_PAGE_DEFAULT = 100
export const SCHEMA_PAGE_MAX = 1000

export const SchemaHistoryQuery = Type.Object({
  pageToken: Type.Optional(Type.String({ description: 'The `next-page-token` of the previous page; empty or absent for the first.' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: SCHEMA_PAGE_MAX, description: `Most schemas in the answer (default ${SCHEMA_PAGE_DEFAULT}). A schema carries every column, so a page of a wide table is large: the answer is paged so that neither side holds a long history of wide schemas at once.` }))
})

/** Which page of a table's schemas to answer, as the caller asked for it. */
interface SchemaPage {
  readonly pageToken?: string
  readonly pageSize?: number
}

export type SchemaHistory = Static<typeof SchemaHistorySchema>
type Lineage = Static<typeof FieldLineageSchema>

/**
 * The page token: the schema id of the last schema answered and its position, base64url JSON.
 * The next page starts after that schema, found by id (a token stays valid when schemas are added).
 */
function encodeToken (schemaId: number, at: number): string {
  return Buffer.from(JSON.stringify([schemaId, at])).toString('base64url')
}

/**
 * The token of the page that starts at `position` in the table's list (empty for the first): for
 * readers that page from the newest schema back, such as the console.
 */
export function schemaPageToken (schemas: readonly Schema[], position: number): string {
  if (position <= 0) return ''
  const at = Math.min(position, schemas.length) - 1
  return encodeToken(schemas[at]?.schemaId ?? at, at)
}

/** Position of the first schema of the page `token` points to, or undefined when it is no token of this table's. */
export function schemaPageStart (schemas: readonly Schema[], token: string | undefined): number | undefined {
  if (token === undefined || token === '') return 0
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || !decoded.every(Number.isInteger)) return undefined
  const [schemaId, at] = decoded as [number, number]
  const id = (s: Schema | undefined, i: number): number => s?.schemaId ?? i
  if (at >= 0 && at < schemas.length && id(schemas[at], at) === schemaId) return at + 1
  const found = schemas.findIndex((s, i) => id(s, i) === schemaId)
  return found < 0 ? undefined : found + 1
}

/**
 * Builds one page of the history answer from parsed table metadata: `page.pageSize` schemas from
 * where `page.pageToken` points; lineage and dropped names always over the whole history (they
 * grow with the distinct field ids, not with the number of schemas). Undefined for a token that is
 * not one of this table's.
 */
export function buildSchemaHistory (table: TableIdentifier, metadata: TableMetadata, page: SchemaPage = {}): SchemaHistory | undefined {
  const schemas = metadata.schemas
  const start = schemaPageStart(schemas, page.pageToken)
  if (start === undefined) return undefined
  const size = Math.min(page.pageSize ?? SCHEMA_PAGE_DEFAULT, SCHEMA_PAGE_MAX)
  const end = Math.min(schemas.length, start + size)
  const versions = schemas.slice(start, end).map((schema, j) => {
    const i = start + j
    const previous: Schema | undefined = i > 0 ? schemas[i - 1] : undefined
    const changes = previous === undefined ? [] : diffSchemas(previous, schema)
    const version: Static<typeof SchemaVersionSchema> = {
      'schema-id': schema.schemaId ?? i,
      current: schema.schemaId === metadata.currentSchemaId,
      schema: schemaToJson(schema) as Static<typeof SchemaJsonSchema>,
      changes: changes.map(changeToWire),
      summary: previous === undefined ? 'initial schema' : summarizeChanges(changes)
    }
    if (previous !== undefined) version['previous-schema-id'] = previous.schemaId ?? i - 1
    return version
  })

  // Positional reads of each schema's index (no object per field), and a type written out once
  // per id, for the last schema that has it: this walk is over every field of every schema.
  const lineage = new Map<number, Lineage & { lastSeen: number, lastType: IcebergType }>()
  schemas.forEach((schema, i) => {
    const schemaId = schema.schemaId ?? i
    const isCurrent = schemaId === metadata.currentSchemaId
    const index = indexSchema(schema)
    for (let pos = 0; pos < index.size; pos++) {
      const id = index.idAt(pos)
      const path = index.parentAt(pos) < 0 ? index.nameAt(pos) : index.pathAt(pos)
      let entry = lineage.get(id)
      if (entry === undefined) {
        entry = { 'field-id': id, names: [], type: '', 'added-in-schema-id': schemaId, 'in-current-schema': false, lastSeen: i, lastType: index.typeAt(pos) }
        lineage.set(id, entry)
      }
      const names = entry.names
      if (names[names.length - 1] !== path && !names.includes(path)) names.push(path)
      entry.lastType = index.typeAt(pos)
      entry.lastSeen = i
      if (isCurrent) entry['in-current-schema'] = true
    }
  })

  const last = schemas.length - 1
  const livePaths = new Map<string, number>()
  const current = schemas.find(s => s.schemaId === metadata.currentSchemaId) ?? schemas[last]
  if (current !== undefined) for (const f of indexSchema(current).fields) livePaths.set(f.path, f.id)

  const droppedNames: Static<typeof DroppedNameSchema>[] = []
  const entries = [...lineage.values()].sort((a, b) => a['field-id'] - b['field-id'])
  const out: Lineage[] = entries.map(({ lastSeen, lastType, ...entry }) => {
    entry.type = typeToString(lastType)
    if (lastSeen < last) {
      const droppedIn = schemas[lastSeen + 1]?.schemaId ?? lastSeen + 1
      entry['dropped-in-schema-id'] = droppedIn
      const name = entry.names[entry.names.length - 1] as string
      const dropped: Static<typeof DroppedNameSchema> = { name, 'field-id': entry['field-id'], 'dropped-in-schema-id': droppedIn }
      const reuser = livePaths.get(name)
      if (reuser !== undefined && reuser !== entry['field-id']) dropped['reused-by-field-id'] = reuser
      droppedNames.push(dropped)
    }
    return entry
  })

  const lastAnswered = schemas[end - 1]
  return {
    table,
    'format-version': metadata.formatVersion,
    'current-schema-id': metadata.currentSchemaId,
    'last-column-id': metadata.lastColumnId,
    schemas: versions,
    ...(end < schemas.length && lastAnswered !== undefined && { 'next-page-token': encodeToken(lastAnswered.schemaId ?? end - 1, end - 1) }),
    lineage: out,
    'dropped-names': droppedNames
  }
}
