/**
 * The view index as the admin API shows it (docs/view-index.md): the views that read a table
 * (`…/dependents`) and the index's own state (`/views/index`). Identifiers and columns only: a
 * view's SQL is never part of an answer.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { DependentView } from '../iceberg/view-reads.js'
import { TableIdentifierSchema } from './iceberg-rest.js'
import { ref } from './ref.js'

export const ReadColumnSchema = Type.Object({
  'field-id': Type.Optional(Type.Integer({ description: 'Field id of the column in the table\'s schema when the view was indexed; absent when the table had no such column.' })),
  name: Type.String({ description: 'Dotted path of the column (`address.city` for a struct field).' })
}, { $id: 'ReadColumn', additionalProperties: false })

export const DependentViewSchema = Type.Object({
  identifier: ref(TableIdentifierSchema),
  dialects: Type.Array(Type.String(), { description: 'SQL dialects of the view\'s current version, lower-cased.' }),
  columns: Type.Array(ref(ReadColumnSchema), { description: 'Columns of this table the view reads.' }),
  star: Type.Boolean({ description: 'The view selects `*` (or `t.*`) from the table: it reads every column.' }),
  parsed: Type.Boolean({ description: 'false: no representation could be parsed; the view is taken to read every column of every table it names.' })
}, { $id: 'DependentView', additionalProperties: false })

export const DependentsSchema = Type.Object({
  views: Type.Array(ref(DependentViewSchema)),
  'indexed-at': Type.Optional(Type.String({ format: 'date-time', description: 'When the last crawl of the catalog began; absent before the first.' })),
  complete: Type.Boolean({ description: 'Whether the last crawl read every view of the catalog (see `GET /admin/v1/views/index`).' })
}, { $id: 'Dependents', additionalProperties: false })

export const ViewIndexStatusSchema = Type.Object({
  views: Type.Integer({ description: 'Views in the index.' }),
  unparsed: Type.Integer({ description: 'Views none of whose SQL representations could be parsed.' }),
  'indexed-at': Type.Optional(Type.String({ format: 'date-time', description: 'When the last crawl of the catalog began; absent before the first.' })),
  complete: Type.Boolean({ description: 'Whether the last crawl read every namespace and view it listed.' }),
  errors: Type.Array(Type.String(), { description: 'What the last crawl could not read (path and status), or why there was none.' })
}, { $id: 'ViewIndexStatus', additionalProperties: false })

export const VIEW_INDEX_SCHEMAS = [ReadColumnSchema, DependentViewSchema, DependentsSchema, ViewIndexStatusSchema]

export type DependentViewWire = Static<typeof DependentViewSchema>

export function dependentToWire (v: DependentView): DependentViewWire {
  return {
    identifier: { namespace: [...v.namespace], name: v.name },
    dialects: [...v.dialects],
    columns: v.columns.map(c => ({ ...(c.fieldId !== undefined && { 'field-id': c.fieldId }), name: c.name })),
    star: v.star,
    parsed: v.parsed
  }
}
