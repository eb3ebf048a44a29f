/**
 * Where in a request file a finding belongs, so CI annotations point at the line: the field with
 * the finding's id in the schema the request installs (`add-schema`, or a create's `schema`), the
 * requirement a conflict names, else the schema itself. JSON is YAML 1.2, so the `yaml` parser
 * (already the policy's) gives every node's position; numbers are only compared, never kept.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'

export interface RequestLines {
  /** 1-based line of the field (or list element, map key or value) with this id; else of the installed schema. */
  field (fieldId: number | undefined): number | undefined
  /** 1-based line of the requirement of this type (`assert-current-schema-id`); else of the installed schema. */
  requirement (type: string): number | undefined
}

const NONE: RequestLines = { field: () => undefined, requirement: () => undefined }

/** Keys that carry a field id in an Iceberg schema: a struct field's, a list element's, a map key's and value's. */
const ID_KEYS = ['id', 'element-id', 'key-id', 'value-id']

export function requestLines (text: string): RequestLines {
  const counter = new LineCounter()
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false })
  if (doc.errors.length > 0 || !isMap(doc.contents)) return NONE
  const root = doc.contents
  const line = (node: Node | null | undefined): number | undefined =>
    node?.range === undefined || node.range === null ? undefined : counter.linePos(node.range[0]).line

  // The schema the request installs: the last add-schema update, or a CreateTableRequest's schema.
  let schema: Node | undefined
  const updates = root.get('updates', true)
  if (isSeq(updates)) {
    for (const u of updates.items) if (isMap(u) && u.get('action') === 'add-schema') schema = u.get('schema', true) as Node | undefined
  }
  if (schema === undefined) schema = root.get('schema', true) as Node | undefined

  function findId (node: unknown, id: number): Node | undefined {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (isScalar(pair.key) && ID_KEYS.includes(String(pair.key.value)) && isScalar(pair.value) && Number(pair.value.value) === id) return pair.key
      }
      for (const pair of node.items) {
        const found = findId(pair.value, id)
        if (found !== undefined) return found
      }
    } else if (isSeq(node)) {
      for (const item of node.items) {
        const found = findId(item, id)
        if (found !== undefined) return found
      }
    }
    return undefined
  }

  return {
    field (fieldId) {
      const at = fieldId === undefined ? undefined : findId(schema, fieldId)
      return line(at ?? schema)
    },
    requirement (type) {
      const requirements = root.get('requirements', true)
      if (isSeq(requirements)) {
        for (const r of requirements.items) if (isMap(r) && r.get('type') === type) return line(r)
      }
      return line(schema)
    }
  }
}
