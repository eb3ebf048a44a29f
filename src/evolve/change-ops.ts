/**
 * The high-level schema changes a person asks for, in the spirit of Java's `UpdateSchema` and
 * PyIceberg's `UpdateSchema`, plus the idempotent `ensure-*` helpers platform teams script on every
 * deploy. Nobody writes a field id: they are handed out when the changes are applied.
 *
 * The wire form is kebab-case (`{"op": "rename-column", "path": "a", "new-name": "b"}`);
 * `readSchemaChanges` turns it into these values once, naming every problem with its index.
 */
import { isObject, own } from '../iceberg/json-values.js'

/** A type as written by a person: a string (`long`, `list<string>`) or the spec's JSON with placeholder ids. */
export type TypeInput = unknown

export type SchemaChangeOp =
  | { readonly op: 'add-column', readonly name: string, readonly type: TypeInput, readonly doc?: string }
  | { readonly op: 'add-nested-column', readonly parent: string, readonly name: string, readonly type: TypeInput, readonly doc?: string }
  | { readonly op: 'rename-column', readonly path: string, readonly newName: string }
  | { readonly op: 'make-column-optional', readonly path: string }
  | { readonly op: 'update-column-type', readonly path: string, readonly type: TypeInput }
  /** `doc: null` removes the doc. */
  | { readonly op: 'update-doc', readonly path: string, readonly doc: string | null }
  | { readonly op: 'move-column', readonly path: string, readonly first?: true, readonly before?: string, readonly after?: string }
  | { readonly op: 'delete-column', readonly path: string }
  | { readonly op: 'union-by-name', readonly schema: unknown }
  | { readonly op: 'ensure-column', readonly path: string, readonly type: TypeInput, readonly doc?: string, readonly legacyArchival?: boolean }
  | { readonly op: 'ensure-rename', readonly from: string, readonly to: string }

export type SchemaChangeKind = SchemaChangeOp['op']

export const CHANGE_KINDS: readonly SchemaChangeKind[] = [
  'add-column', 'add-nested-column', 'rename-column', 'make-column-optional', 'update-column-type', 'update-doc',
  'move-column', 'delete-column', 'union-by-name', 'ensure-column', 'ensure-rename'
]

/** Wire fields each kind accepts, beyond `op`; the first group is required. */
const FIELDS: Readonly<Record<SchemaChangeKind, { required: readonly string[], optional: readonly string[] }>> = {
  'add-column': { required: ['name', 'type'], optional: ['doc'] },
  'add-nested-column': { required: ['parent', 'name', 'type'], optional: ['doc'] },
  'rename-column': { required: ['path', 'new-name'], optional: [] },
  'make-column-optional': { required: ['path'], optional: [] },
  'update-column-type': { required: ['path', 'type'], optional: [] },
  'update-doc': { required: ['path', 'doc'], optional: [] },
  'move-column': { required: ['path'], optional: ['first', 'before', 'after'] },
  'delete-column': { required: ['path'], optional: [] },
  'union-by-name': { required: ['schema'], optional: [] },
  'ensure-column': { required: ['path', 'type'], optional: ['doc', 'legacy-archival'] },
  'ensure-rename': { required: ['from', 'to'], optional: [] }
}

/** Fields that are names or paths: non-empty strings. */
const TEXT_FIELDS = new Set(['name', 'parent', 'path', 'new-name', 'before', 'after', 'from', 'to'])

/** Reads the wire list of changes; every problem is reported as `changes[i].field: what`. */
export function readSchemaChanges (json: unknown): { changes?: SchemaChangeOp[], problems: string[] } {
  if (!Array.isArray(json)) return { problems: ['changes: expected an array of changes'] }
  if (json.length === 0) return { problems: ['changes: the list is empty; name at least one change'] }
  const problems: string[] = []
  const changes: SchemaChangeOp[] = []
  json.forEach((item, i) => {
    const at = `changes[${i}]`
    if (!isObject(item)) { problems.push(`${at}: expected an object with "op"`); return }
    const kind = own(item, 'op')
    if (typeof kind !== 'string' || !(CHANGE_KINDS as readonly string[]).includes(kind)) {
      problems.push(`${at}.op: ${kind === undefined ? 'missing' : `unknown change ${JSON.stringify(kind)}`} (one of ${CHANGE_KINDS.join(', ')})`)
      return
    }
    const spec = FIELDS[kind as SchemaChangeKind]
    const before = problems.length
    for (const key of Object.keys(item)) {
      if (key !== 'op' && !spec.required.includes(key) && !spec.optional.includes(key)) {
        problems.push(`${at}.${key}: not a field of ${kind} (fields: ${[...spec.required, ...spec.optional].join(', ')})`)
      }
    }
    for (const key of spec.required) if (own(item, key) === undefined) problems.push(`${at}.${key}: missing (${kind} needs ${spec.required.join(', ')})`)
    for (const key of [...spec.required, ...spec.optional]) {
      const v = own(item, key)
      if (v === undefined) continue
      if (TEXT_FIELDS.has(key) && (typeof v !== 'string' || v === '')) problems.push(`${at}.${key}: must be a non-empty string`)
      if (key === 'doc' && typeof v !== 'string' && !(v === null && kind === 'update-doc')) problems.push(`${at}.doc: must be a string`)
      if ((key === 'legacy-archival') && typeof v !== 'boolean') problems.push(`${at}.${key}: must be true or false`)
      if (key === 'first' && v !== true) problems.push(`${at}.first: must be true (or leave it out)`)
    }
    if (kind === 'move-column') {
      const given = ['first', 'before', 'after'].filter(k => own(item, k) !== undefined)
      if (given.length !== 1) problems.push(`${at}: move-column needs exactly one of first, before, after`)
    }
    if (problems.length > before) return
    changes.push(fromWire(kind as SchemaChangeKind, item))
  })
  return problems.length > 0 ? { problems } : { changes, problems }
}

function fromWire (kind: SchemaChangeKind, w: Readonly<Record<string, unknown>>): SchemaChangeOp {
  const s = (k: string): string => own(w, k) as string
  const doc = own(w, 'doc') as string | undefined
  switch (kind) {
    case 'add-column': return { op: kind, name: s('name'), type: own(w, 'type'), ...(doc !== undefined && { doc }) }
    case 'add-nested-column': return { op: kind, parent: s('parent'), name: s('name'), type: own(w, 'type'), ...(doc !== undefined && { doc }) }
    case 'rename-column': return { op: kind, path: s('path'), newName: s('new-name') }
    case 'make-column-optional': return { op: kind, path: s('path') }
    case 'update-column-type': return { op: kind, path: s('path'), type: own(w, 'type') }
    case 'update-doc': return { op: kind, path: s('path'), doc: own(w, 'doc') as string | null }
    case 'move-column': {
      if (own(w, 'first') === true) return { op: kind, path: s('path'), first: true }
      if (own(w, 'before') !== undefined) return { op: kind, path: s('path'), before: s('before') }
      return { op: kind, path: s('path'), after: s('after') }
    }
    case 'delete-column': return { op: kind, path: s('path') }
    case 'union-by-name': return { op: kind, schema: own(w, 'schema') }
    case 'ensure-column': {
      const archival = own(w, 'legacy-archival') as boolean | undefined
      return { op: kind, path: s('path'), type: own(w, 'type'), ...(doc !== undefined && { doc }), ...(archival !== undefined && { legacyArchival: archival }) }
    }
    case 'ensure-rename': return { op: kind, from: s('from'), to: s('to') }
  }
}

/** The wire form of a change (kebab-case keys), as the API takes and answers it. */
export function schemaChangeToWire (c: SchemaChangeOp): Record<string, unknown> {
  switch (c.op) {
    case 'rename-column': return { op: c.op, path: c.path, 'new-name': c.newName }
    case 'ensure-column': {
      const { legacyArchival, ...rest } = c
      return { ...rest, ...(legacyArchival !== undefined && { 'legacy-archival': legacyArchival }) }
    }
    default: return { ...c }
  }
}

/** A short label of a change for messages: `update-column-type price`. */
export function changeLabel (c: SchemaChangeOp): string {
  switch (c.op) {
    case 'add-column': return `${c.op} ${c.name}`
    case 'add-nested-column': return `${c.op} ${c.parent}.${c.name}`
    case 'union-by-name': return c.op
    case 'ensure-rename': return `${c.op} ${c.from} -> ${c.to}`
    default: return `${c.op} ${c.path}`
  }
}
