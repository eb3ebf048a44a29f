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

/** Where a request object sits in the body: `[]` for the top level, `['table-changes', 2]` in a transaction. */
export type JsonPath = ReadonlyArray<string | number>

/** A requirement to write into a request: its `type`, the member that carries its value, the value. */
export interface SplicedRequirement {
  readonly type: string
  readonly field: string
  readonly value: number
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
      const empty = raw[skipSpace(raw, objectStart + 1)] === RBRACE
      splices.push({ from: objectStart + 1, to: objectStart + 1, text: `"requirements":[${added}]${empty ? '' : ','}` })
    } else if (raw[existing.valueStart] === LBRACKET) {
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
  return `{"type":${JSON.stringify(m.type)},${JSON.stringify(m.field)}:${JSON.stringify(m.value)}}`
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LBRACE = 0x7b
const RBRACE = 0x7d
const LBRACKET = 0x5b
const RBRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

interface Member { readonly key: string, readonly valueStart: number, readonly valueEnd: number }

/** Start offset of the value at `path` (an object). */
function locate (raw: Buffer, path: JsonPath): number {
  let at = skipSpace(raw, skipBom(raw))
  for (const step of path) {
    if (typeof step === 'number') {
      const element = raw[at] === LBRACKET ? elementAt(raw, at, step) : undefined
      if (element === undefined) throw new Error(`Cannot add requirements: no element ${step} in the body`)
      at = element.start
    } else {
      const member = raw[at] === LBRACE ? findMember(raw, at, step) : undefined
      if (member === undefined) throw new Error(`Cannot add requirements: no member ${step} in the body`)
      at = member.valueStart
    }
  }
  if (raw[at] !== LBRACE) throw new Error('Cannot add requirements: the request is not a JSON object')
  return at
}

/**
 * The member `key` of the object starting at `start` (its `{`). The walk stops there: the body
 * has no duplicate keys, and clients send `requirements` before `updates`, so the schema the
 * commit adds (most of its bytes) is never walked.
 */
function findMember (raw: Buffer, start: number, key: string): Member | undefined {
  let i = skipSpace(raw, start + 1)
  if (raw[i] === RBRACE) return undefined
  for (;;) {
    const keyEnd = skipString(raw, i)
    const name = decodeKey(raw, i, keyEnd)
    i = skipSpace(raw, keyEnd)
    if (raw[i] !== COLON) throw new Error('Cannot add requirements: malformed object')
    const valueStart = skipSpace(raw, i + 1)
    const valueEnd = skipValue(raw, valueStart)
    if (name === key) return { key, valueStart, valueEnd }
    i = skipSpace(raw, valueEnd)
    if (raw[i] === COMMA) { i = skipSpace(raw, i + 1); continue }
    if (raw[i] === RBRACE) return undefined
    throw new Error('Cannot add requirements: malformed object')
  }
}

/** Element `index` of the array starting at `start` (its `[`); with `index` -1, the last one. */
function elementAt (raw: Buffer, start: number, index: number): { start: number, end: number } | undefined {
  let i = skipSpace(raw, start + 1)
  if (raw[i] === RBRACKET) return undefined
  for (let k = 0; ; k++) {
    const end = skipValue(raw, i)
    if (k === index) return { start: i, end }
    const next = skipSpace(raw, end)
    if (raw[next] === COMMA) { i = skipSpace(raw, next + 1); continue }
    if (raw[next] === RBRACKET) return index === -1 ? { start: i, end } : undefined
    throw new Error('Cannot add requirements: malformed array')
  }
}

function lastElement (raw: Buffer, start: number): { start: number, end: number } | undefined {
  return elementAt(raw, start, -1)
}

/** End offset (exclusive) of the value starting at `i`. */
function skipValue (raw: Buffer, i: number): number {
  const c = raw[i]
  if (c === QUOTE) return skipString(raw, i)
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0
    for (; i < raw.length; i++) {
      const d = raw[i]
      if (d === QUOTE) i = skipString(raw, i) - 1
      else if (d === LBRACE || d === LBRACKET) depth++
      else if ((d === RBRACE || d === RBRACKET) && --depth === 0) return i + 1
    }
    throw new Error('Cannot add requirements: unterminated value')
  }
  // A number or literal: up to the next delimiter or space.
  while (i < raw.length) {
    const d = raw[i] as number
    if (d === COMMA || d === RBRACE || d === RBRACKET || isSpace(d)) break
    i++
  }
  return i
}

/** End offset (exclusive, after the closing quote) of the string starting at `i`. */
function skipString (raw: Buffer, i: number): number {
  if (raw[i] !== QUOTE) throw new Error('Cannot add requirements: expected a string')
  // Strings are most of a body's bytes: the closing quote is found natively, then checked for
  // escaping (an odd run of backslashes before it).
  let q = i
  for (;;) {
    q = raw.indexOf(QUOTE, q + 1)
    if (q === -1) throw new Error('Cannot add requirements: unterminated string')
    let b = q - 1
    while (raw[b] === BACKSLASH) b--
    if ((q - b) % 2 === 1) return q + 1
  }
}

function decodeKey (raw: Buffer, start: number, end: number): string {
  const slice = raw.subarray(start, end)
  // Only an escaped key needs decoding; `"requir\u0065ments"` is the same key.
  return slice.includes(BACKSLASH) ? JSON.parse(slice.toString('utf8')) as string : raw.toString('utf8', start + 1, end - 1)
}

function skipSpace (raw: Buffer, i: number): number {
  while (i < raw.length && isSpace(raw[i] as number)) i++
  return i
}

function isSpace (c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/** A UTF-8 byte order mark the reader tolerated (TextDecoder drops it): left in place, skipped here. */
function skipBom (raw: Buffer): number {
  return raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0
}
