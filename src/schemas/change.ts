/**
 * Wire form of a schema change (`src/engine/diff/schema-change.ts`): kebab-case keys, types in the spec's
 * JSON spelling. The domain union is mapped case by case so a new change kind fails to compile here
 * until it has a wire form.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { Change } from '../engine/diff/schema-change.js'
import type { NestedField } from '../iceberg/types.js'
import { typeToJson } from '../iceberg/print.js'
import { IcebergTypeSchema } from './iceberg-rest.js'
import { ref } from './ref.js'

const FieldJsonSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  required: Type.Boolean(),
  type: ref(IcebergTypeSchema),
  doc: Type.Optional(Type.String())
}, { additionalProperties: true })

function kind<K extends string, P extends Record<string, TSchema>> (name: K, props: P, description: string) {
  return Type.Object({
    kind: Type.Literal(name),
    'field-id': Type.Integer({ description: 'Id of the field that changed: its identity across schemas.' }),
    path: Type.String({ description: 'Dotted path in the newer schema (the older one for field-dropped).' }),
    ...props
  }, { description, additionalProperties: false })
}

const Nullability = Type.Union([Type.Literal('required'), Type.Literal('optional')])

export const SchemaChangeSchema = Type.Union([
  kind('field-added', { 'parent-id': Type.Optional(Type.Integer()), field: FieldJsonSchema }, 'A field id that the older schema does not have.'),
  kind('field-dropped', { 'parent-id': Type.Optional(Type.Integer()), field: FieldJsonSchema }, 'A field id that the newer schema no longer has.'),
  kind('field-renamed', { 'old-path': Type.String(), 'old-name': Type.String(), 'new-name': Type.String() }, 'Same field id, another name.'),
  kind('type-changed', { from: ref(IcebergTypeSchema), to: ref(IcebergTypeSchema) }, 'A primitive type changed to another primitive.'),
  kind('kind-changed', { from: ref(IcebergTypeSchema), to: ref(IcebergTypeSchema) }, 'Primitive to nested or between nested kinds: never allowed by the spec.'),
  kind('nullability-changed', { from: Nullability, to: Nullability }, 'required ↔ optional.'),
  kind('doc-changed', { from: Type.Optional(Type.String()), to: Type.Optional(Type.String()) }, 'The field doc changed.'),
  kind('default-changed', {
    which: Type.Union([Type.Literal('initial-default'), Type.Literal('write-default')]),
    from: Type.Optional(Type.Unknown()),
    to: Type.Optional(Type.Unknown())
  }, 'A v3 default value changed.'),
  kind('field-moved', { 'old-path': Type.String(), 'old-parent-id': Type.Optional(Type.Integer()), 'new-parent-id': Type.Optional(Type.Integer()) }, 'The field now sits under another parent.'),
  kind('field-reordered', { 'old-index': Type.Integer(), 'new-index': Type.Integer() }, 'Same parent, another position.'),
  Type.Object({
    kind: Type.Literal('identifier-fields-changed'),
    added: Type.Array(Type.Integer()),
    removed: Type.Array(Type.Integer())
  }, { description: 'The schema\'s identifier field ids changed.', additionalProperties: false })
], { $id: 'SchemaChange', description: 'One change between two schemas, paired by field id.' })

export type WireChange = Static<typeof SchemaChangeSchema>

function fieldJson (f: NestedField): Static<typeof FieldJsonSchema> {
  const out: Static<typeof FieldJsonSchema> = { id: f.id, name: f.name, required: f.required, type: typeToJson(f.type) as Static<typeof IcebergTypeSchema> }
  if (f.doc !== undefined) out.doc = f.doc
  return out
}

/** Drops undefined members so the JSON carries only what is known. */
function defined<T extends Record<string, unknown>> (o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k]
  return o
}

/** Domain change → wire change. */
export function changeToWire (c: Change): WireChange {
  const type = (t: Parameters<typeof typeToJson>[0]) => typeToJson(t) as Static<typeof IcebergTypeSchema>
  switch (c.kind) {
    case 'identifier-fields-changed':
      return { kind: c.kind, added: [...c.added], removed: [...c.removed] }
    case 'field-added':
    case 'field-dropped':
      return defined({ kind: c.kind, 'field-id': c.fieldId, path: c.path, 'parent-id': c.parentId, field: fieldJson(c.field) })
    case 'field-renamed':
      return { kind: c.kind, 'field-id': c.fieldId, path: c.path, 'old-path': c.oldPath, 'old-name': c.oldName, 'new-name': c.newName }
    case 'type-changed':
    case 'kind-changed':
      return { kind: c.kind, 'field-id': c.fieldId, path: c.path, from: type(c.from), to: type(c.to) }
    case 'nullability-changed':
      return { kind: c.kind, 'field-id': c.fieldId, path: c.path, from: c.from, to: c.to }
    case 'doc-changed':
      return defined({ kind: c.kind, 'field-id': c.fieldId, path: c.path, from: c.from, to: c.to })
    case 'default-changed':
      return defined({ kind: c.kind, 'field-id': c.fieldId, path: c.path, which: c.which, from: c.from, to: c.to })
    case 'field-moved':
      return defined({ kind: c.kind, 'field-id': c.fieldId, path: c.path, 'old-path': c.oldPath, 'old-parent-id': c.oldParentId, 'new-parent-id': c.newParentId })
    case 'field-reordered':
      return { kind: c.kind, 'field-id': c.fieldId, path: c.path, 'old-index': c.oldIndex, 'new-index': c.newIndex }
  }
}
