/**
 * YAML with positions. Policy and contract files are read through here so that every problem —
 * a YAML syntax error, a schema mismatch, an unknown rule id — can name the file, line and column
 * the operator has to edit (the `yaml` package's LineCounter over the parsed document's CST ranges).
 */
import { isMap, isNode, isPair, isScalar, LineCounter, parseDocument, type Document } from 'yaml'

/** One problem in a policy or contract file. Lines and columns are 1-based. */
export interface PolicyIssue {
  readonly source: string
  readonly line: number
  readonly column: number
  /** JSON-pointer-like location inside the document, `/namespaces/finance/mode`. */
  readonly path: string
  readonly message: string
}

export interface YamlSource {
  readonly source: string
  readonly doc: Document
  readonly value: unknown
  /** Syntax errors; when non-empty `value` must not be trusted. */
  readonly issues: PolicyIssue[]
  /** Position of the node at a JSON pointer (or of its closest existing ancestor). */
  at (pointer: string | readonly (string | number)[], message: string, onKey?: boolean): PolicyIssue
  /** Keys of the mapping at `pointer` in file order (JS objects reorder integer-like keys). */
  keysAt (pointer: readonly (string | number)[]): string[]
}

export function pointerSegments (pointer: string): string[] {
  if (pointer === '' || pointer === '/') return []
  return pointer.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

function toPointer (segments: readonly (string | number)[]): string {
  return segments.length === 0 ? '/' : '/' + segments.map(s => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')
}

export function readYaml (text: string, source: string): YamlSource {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false })
  const issues: PolicyIssue[] = []
  for (const e of [...doc.errors]) {
    const pos = lineCounter.linePos(e.pos[0])
    issues.push({ source, line: pos.line, column: pos.col, path: '', message: e.message.split('\n')[0] ?? e.message })
  }
  const value = issues.length === 0 ? doc.toJS({ maxAliasCount: 100 }) : undefined

  function nodeAt (segments: readonly (string | number)[], onKey: boolean): { offset: number, found: boolean } {
    let node: unknown = doc.contents
    let offset = 0
    for (const [i, seg] of segments.entries()) {
      if (!isNode(node)) break
      if (node.range) offset = node.range[0]
      // A key that names a problem (unexpected property) is best shown at the key itself.
      if (isMap(node)) {
        const pair = node.items.find(p => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg))
        if (!pair) return { offset, found: false }
        const keyNode = pair.key
        if (pair.value == null || !isNode(pair.value) || (onKey && i === segments.length - 1)) {
          return { offset: isNode(keyNode) && keyNode.range ? keyNode.range[0] : offset, found: true }
        }
        node = pair.value
        continue
      }
      const child = (node as { get?: (k: unknown, keep: boolean) => unknown }).get?.(typeof seg === 'string' && /^\d+$/.test(seg) ? Number(seg) : seg, true)
      if (!isNode(child)) return { offset, found: false }
      node = child
    }
    if (isNode(node) && node.range) offset = node.range[0]
    return { offset, found: true }
  }

  return {
    source,
    doc,
    value,
    issues,
    at (pointer, message, onKey = false) {
      const segments = typeof pointer === 'string' ? pointerSegments(pointer) : pointer
      const { offset } = nodeAt(segments, onKey)
      const pos = lineCounter.linePos(offset)
      return { source, line: pos.line, column: pos.col, path: toPointer(segments), message }
    },
    keysAt (segments) {
      const node = segments.length === 0 ? doc.contents : doc.getIn(segments as unknown[], true)
      if (!isMap(node)) return []
      return node.items.map(p => isScalar(p.key) ? String(p.key.value) : String(p.key))
    }
  }
}

/** `file:12:5: message` — the format editors and CI logs turn into links. */
export function formatIssue (issue: PolicyIssue): string {
  return `${issue.source}:${issue.line}:${issue.column}: ${issue.message}`
}
