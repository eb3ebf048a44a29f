/**
 * Adds requirements to a commit body by splicing text into the bytes as received.
 *
 * The gate never re-serialises a commit: every byte it did not add is forwarded as the client sent
 * it, so 64-bit snapshot ids, `1.0`, key order, escapes and whitespace stay exactly as they were by
 * construction, and the cost is one shallow pass over the body instead of a full lossless write.
 * The new requirement objects go at the end of the request object's `requirements` array (after the
 * client's own, as Java lists them); without that key, a `requirements` member is added at the start
 * of the object; a `requirements` that is not an array is replaced (the gate judged the commit as
 * having none, and a request the rules refused never gets here).
 *
 * The body has been read by `parseCommitBody` before: it is valid JSON with no duplicate keys, so
 * this pass only finds positions (strings, escapes and nesting respected). The structural bytes of
 * JSON are ASCII and never occur inside a multi-byte UTF-8 sequence, so positions are byte offsets.
 */
import {
  CLOSE_BRACE, CLOSE_BRACKET, colonValue, COMMA, keyIs, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipWs, stringEnd, stringToken, valueEnd
} from './scan.js'

/** Where a request object sits in the body: `[]` for the top level, `['table-changes', 2]` in a transaction. */
export type JsonPath = ReadonlyArray<string | number>

/** A requirement to write into a request: its `type`, the ref it names if any, the member that carries its value, the value. */
export interface SplicedRequirement {
  readonly type: string
  readonly ref?: string
  readonly field: string
  readonly value: number | null
}

export interface RequirementEdit {
  readonly at: JsonPath
  readonly requirements: readonly SplicedRequirement[]
}

interface Splice {
  readonly from: number
  /** End of the bytes replaced (`from` when only inserting). */
  readonly to: number
  readonly text: string
}

/** The body with each edit's requirements added to the object at its path. Throws if a path is not an object. */
export function spliceRequirements (raw: Buffer, edits: readonly RequirementEdit[]): Buffer {
  const splices: Splice[] = []
  for (const edit of edits) {
    if (edit.requirements.length === 0) continue
    const objectStart = locate(raw, edit.at)
    const added = edit.requirements.map(requirementJson).join(',')
    const existing = findMember(raw, objectStart, 'requirements')
    if (existing === undefined) {
      const empty = raw[skipWs(raw, objectStart + 1)] === CLOSE_BRACE
      splices.push({ from: objectStart + 1, to: objectStart + 1, text: `"requirements":[${added}]${empty ? '' : ','}` })
    } else if (raw[existing.valueStart] === OPEN_BRACKET) {
      const last = lastElement(raw, existing.valueStart)
      splices.push(last === undefined
        ? { from: existing.valueStart + 1, to: existing.valueStart + 1, text: added }
        : { from: last.end, to: last.end, text: `,${added}` })
    } else {
      splices.push({ from: existing.valueStart, to: existing.valueEnd, text: `[${added}]` })
    }
  }
  if (splices.length === 0) return raw
  splices.sort((a, b) => a.from - b.from)
  const parts: Buffer[] = []
  let from = 0
  for (const s of splices) {
    parts.push(raw.subarray(from, s.from), Buffer.from(s.text, 'utf8'))
    from = s.to
  }
  parts.push(raw.subarray(from))
  return Buffer.concat(parts)
}

/** A requirement as Java writes it: `{"type":…,"<field>":<value>}`. The values are small integers. */
export function requirementJson (m: SplicedRequirement): string {
  const ref = m.ref === undefined ? '' : `"ref":${JSON.stringify(m.ref)},`
  return `{"type":${JSON.stringify(m.type)},${ref}${JSON.stringify(m.field)}:${JSON.stringify(m.value)}}`
}

interface Member { readonly valueStart: number, readonly valueEnd: number }

/** Start offset of the value at `path` (an object). */
function locate (raw: Buffer, path: JsonPath): number {
  let at = skipWs(raw, skipBom(raw))
  for (const step of path) {
    if (typeof step === 'number') {
      const element = raw[at] === OPEN_BRACKET ? elementAt(raw, at, step) : undefined
      if (element === undefined) throw new Error(`Cannot add requirements: no element ${step} in the body`)
      at = element.start
    } else {
      const member = raw[at] === OPEN_BRACE ? findMember(raw, at, step) : undefined
      if (member === undefined) throw new Error(`Cannot add requirements: no member ${step} in the body`)
      at = member.valueStart
    }
  }
  if (raw[at] !== OPEN_BRACE) throw new Error('Cannot add requirements: the request is not a JSON object')
  return at
}

/**
 * The member `key` of the object starting at `start` (its `{`). The walk stops there: the body
 * has no duplicate keys, and clients send `requirements` before `updates`, so the schema the
 * commit adds (most of its bytes) is never walked.
 */
function findMember (raw: Buffer, start: number, key: string): Member | undefined {
  const keyBytes = Buffer.from(key, 'utf8')
  let i = skipWs(raw, start + 1)
  if (raw[i] === CLOSE_BRACE) return undefined
  for (;;) {
    const keyEnd = raw[i] === QUOTE ? stringEnd(raw, i) : -1
    const found = keyEnd !== -1 && keyIs(raw, i, keyEnd, stringToken.escaped, key, keyBytes)
    const valueStart = keyEnd === -1 ? -1 : colonValue(raw, keyEnd)
    if (valueStart === -1) throw new Error('Cannot add requirements: malformed object')
    const end = endOf(raw, valueStart)
    if (found) return { valueStart, valueEnd: end }
    i = skipWs(raw, end)
    if (raw[i] === COMMA) { i = skipWs(raw, i + 1); continue }
    if (raw[i] === CLOSE_BRACE) return undefined
    throw new Error('Cannot add requirements: malformed object')
  }
}

/** Element `index` of the array starting at `start` (its `[`); with `index` -1, the last one. */
function elementAt (raw: Buffer, start: number, index: number): { start: number, end: number } | undefined {
  let i = skipWs(raw, start + 1)
  if (raw[i] === CLOSE_BRACKET) return undefined
  for (let k = 0; ; k++) {
    const end = endOf(raw, i)
    if (k === index) return { start: i, end }
    const next = skipWs(raw, end)
    if (raw[next] === COMMA) { i = skipWs(raw, next + 1); continue }
    if (raw[next] === CLOSE_BRACKET) return index === -1 ? { start: i, end } : undefined
    throw new Error('Cannot add requirements: malformed array')
  }
}

function lastElement (raw: Buffer, start: number): { start: number, end: number } | undefined {
  return elementAt(raw, start, -1)
}

/** End offset (exclusive) of the value starting at `i`; the reader bounded its depth already. */
function endOf (raw: Buffer, i: number): number {
  const end = valueEnd(raw, i, Infinity)
  if (end === -1) throw new Error('Cannot add requirements: malformed value')
  return end
}

/** A UTF-8 byte order mark the reader tolerated (TextDecoder drops it): left in place, skipped here. */
function skipBom (raw: Buffer): number {
  return raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0
}
