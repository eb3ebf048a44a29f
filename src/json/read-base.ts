/**
 * Reads the bytes of a loadTable answer (`{"metadata-location":…,"metadata":{…},"config":…}`) into
 * a JSON tree for the gate, as `parseUpstreamBody` does — native `JSON.parse`, integers past 2^53
 * kept exact, nesting bounded — with one difference: each element of `metadata.schemas` whose
 * exact text the table's previous read held (`schema-texts.ts`) is not parsed again. The scan
 * compares that text with the answer's at the element's start (character for character) and jumps
 * over it; the tree gets a placeholder there, with the parsed Schema beside it (`reused`), which
 * `parseTableMetadata` takes as it is. Every other byte goes through `JSON.parse` as before, so an answer that is not
 * JSON is still refused with the parser's own message; a reused text is one that parsed as a
 * complete value before, and putting one value in place of another keeps the rest of the text
 * exactly as valid or invalid as it was. The depth bound counts a reused text's own nesting.
 *
 * Within one answer, a top-level field of a schema whose text is the same as the field at the same
 * position of the schema before it (a table's history repeats its columns schema after schema) is
 * not scanned or parsed again either: it is jumped over like a reused schema, and after the parse
 * its place in the tree gets the very JSON object parsed for the earlier one (the tree is only read).
 * On a first read of a table with 20 schemas of history that is most of the answer.
 */
import { LosslessNumber, parse } from 'lossless-json'
import type { Schema } from '../iceberg/types.js'
import { decodeUtf8, DEFAULT_MAX_DEPTH } from './parse-commit-body.js'
import { MARK_ESCAPE, nativeMessage, reviveMarks } from './read-json.js'
import { depthProblem, hasEscape, keepsExact, numberTokenEnd, quoteEnd } from './scan.js'

/** The schemas of one read, in the order of the answer's `schemas` array. */
export interface KnownSchemas {
  readonly texts: readonly string[]
  readonly schemas: readonly Schema[]
  /** Deepest nesting inside each text, for the reader's depth bound. */
  readonly depths: readonly number[]
}

export type BaseText =
  | {
    readonly ok: true
    /** The answer as JSON, a reused schema replaced by the number 0. */
    readonly value: unknown
    /** Reused schemas by their index in `metadata.schemas`. */
    readonly reused: ReadonlyMap<number, Schema>
    /** The texts of this answer's schemas, given the schemas parsed from it (in order); undefined when they do not line up. */
    collect (schemas: readonly Schema[]): KnownSchemas | undefined
  }
  | { readonly ok: false, readonly message: string }

const NONE: ReadonlyMap<number, Schema> = new Map()

/**
 * Reads a loadTable answer (its bytes, or the pieces they arrived in); `known` are the schemas of
 * the table's previous read, if any.
 */
export function readBaseText (raw: Buffer | readonly Buffer[], known?: KnownSchemas, maxDepth = 4 * DEFAULT_MAX_DEPTH): BaseText {
  const text = decodeUtf8(raw)
  if (text === undefined) return { ok: false, message: 'Cannot read upstream answer: it is not valid UTF-8' }
  let scanned = scanAnswer(text, maxDepth, known, true)
  // A second `metadata` or `schemas` key (or one spelled with an escape): JSON.parse keeps the
  // last, the scan cannot tell which text ends up in the tree; read it with nothing reused.
  // (Without tracking, keys are not looked at: never ambiguous.)
  if (scanned === AMBIGUOUS) scanned = scanAnswer(text, maxDepth, undefined, false) as Scan | string
  if (typeof scanned === 'string') return { ok: false, message: `Cannot read upstream answer: ${scanned}` }
  const { edits, marks, elements } = scanned
  let reused = scanned.reused
  let value: unknown
  try {
    if (edits.length === 0) {
      value = JSON.parse(text)
    } else if (marks > 0 && text.includes(MARK_ESCAPE)) {
      // The marker could be confused with the text's own escape: the slow reader, nothing reused.
      value = parse(text, null, (s: string) => new LosslessNumber(s))
      reused = NONE
    } else {
      let rest = ''
      let from = 0
      for (let e = 0; e < edits.length; e += 3) {
        const start = edits[e] as number
        const end = edits[e + 1] as number
        rest += edits[e + 2] === MARK ? `${text.slice(from, start)}"${MARK_ESCAPE}${text.slice(start, end)}"` : `${text.slice(from, start)}0`
        from = end
      }
      rest += text.slice(from)
      value = JSON.parse(rest)
      if (marks > 0) value = reviveMarks(value, marks, text)
      if (scanned.fills.length > 0 && !fillFields(value, scanned.fills)) {
        // Cannot happen for a text the scan followed; if it did, the slow reader, nothing reused.
        value = parse(text, null, (s: string) => new LosslessNumber(s))
        reused = NONE
      }
    }
  } catch (err) {
    return { ok: false, message: `Cannot read upstream answer: invalid JSON: ${nativeMessage(text, err)}` }
  }
  return {
    ok: true,
    value,
    reused,
    collect (schemas) {
      if (schemas.length !== elements.length) return undefined
      const texts: string[] = []
      const depths: number[] = []
      for (const el of elements) {
        if (el === undefined) return undefined
        // A reused text is kept as it was; a new one is copied out of the answer, so that what
        // is kept is the schemas' text, not the whole answer (snapshots and all) behind a slice.
        texts.push(el.text ?? detached(text.slice(el.start, el.end)))
        depths.push(el.depth)
      }
      return { texts, schemas, depths }
    }
  }
}

/** Kinds of edit made to the text before `JSON.parse`. */
const MARK = 0
const REUSE = 1
const REUSE_FIELD = 2
/** What an open container is to the scan. */
const OTHER = 0
const METADATA = 1
const SCHEMAS = 2
/** The `fields` key of a schema (only the scan's key role). */
const FIELDS = 3
/** Where the scan's levels are: inside a schema element, its `fields` array, inside a field. */
const IN_SCHEMA = 4
const IN_FIELDS = 5

const AMBIGUOUS = 1

interface Element {
  readonly start: number
  readonly end: number
  readonly depth: number
  /** The known text, when reused. */
  readonly text?: string
}

interface Scan {
  /** `start, end, kind` triples in text order: a long integer to mark, a reused schema or field. */
  readonly edits: number[]
  readonly marks: number
  readonly reused: ReadonlyMap<number, Schema>
  /** `metadata.schemas` elements by index (objects only). */
  readonly elements: Array<Element | undefined>
  /** `schema, field, from schema, from field` quadruples: a field jumped over, and the one it repeats. */
  readonly fills: number[]
}

/** A top-level field of the schema element scanned last: its text, nesting, and where it was parsed. */
interface FieldText {
  readonly text: string
  readonly depth: number
  readonly schema: number
  readonly field: number
}

/**
 * One pass over the text, as read-json.ts's scan in its non-strict mode (depth bound, integer
 * tokens past 2^53), that also follows the keys of the two top levels to find the elements of
 * `metadata.schemas`: each is compared with the known texts (the one at the same index first) and
 * jumped over when one matches; the others are scanned and their extent recorded.
 */
function scanAnswer (text: string, maxDepth: number, known: KnownSchemas | undefined, track: boolean): Scan | string | typeof AMBIGUOUS {
  const edits: number[] = []
  const elements: Array<Element | undefined> = []
  const reused = new Map<number, Schema>()
  const fills: number[] = []
  let marks = 0
  // Per open container: whether it is an object, and what it is to the scan.
  const isObject: boolean[] = []
  const role: number[] = []
  let depth = 0
  let expectKey = false
  /** Role of a container opened as the value of the key just read. */
  let keyRole = OTHER
  let metadataKeys = 0
  let schemasKeys = 0
  /** The element of `metadata.schemas` being scanned: its start and depth, and the deepest level inside. */
  let elementStart = -1
  let elementBase = 0
  let elementMax = 0
  let elementIndex = 0
  /** In the element being scanned: its `fields` keys, whether its `fields` array is open, the field's index. */
  let fieldsKeys = 0
  let inFields = false
  let fieldIndex = 0
  /** The field being scanned (its start, the deepest level inside), the element's fields so far, the last element's. */
  let fieldStart = -1
  let fieldMax = 0
  let fields: Array<FieldText | undefined> = []
  let previous: Array<FieldText | undefined> = []
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string
      const start = i
      i = quoteEnd(text, i)
      if (expectKey) {
        expectKey = false
        if (!track) continue
        // Only keys at the two top levels and a schema's own keys matter, spelled without escapes
        // (a key spelled with one is a different text; JSON.parse would then see two keys of one
        // name: ambiguous).
        if (depth === 1 && i - start === 9 && text.startsWith('metadata"', start + 1)) {
          keyRole = METADATA
          if (++metadataKeys > 1) return AMBIGUOUS
        } else if (depth === 2 && role[1] === METADATA && i - start === 8 && text.startsWith('schemas"', start + 1)) {
          keyRole = SCHEMAS
          if (++schemasKeys > 1) return AMBIGUOUS
        } else if (depth === IN_SCHEMA && elementStart >= 0 && i - start === 7 && text.startsWith('fields"', start + 1)) {
          keyRole = FIELDS
          if (++fieldsKeys > 1) return AMBIGUOUS
        } else if ((depth <= 2 || (depth === IN_SCHEMA && elementStart >= 0)) && hasEscape(text, start, i)) {
          return AMBIGUOUS
        }
      } else {
        keyRole = OTHER
      }
    } else if (c === 0x7b || c === 0x5b) { // { [
      // Keys, roles and element starts are looked at in the three top levels only.
      if (depth <= 2) {
        const object = c === 0x7b
        isObject[depth] = object
        role[depth] = object && keyRole === METADATA && depth === 1 ? METADATA : !object && keyRole === SCHEMAS && depth === 2 ? SCHEMAS : OTHER
        expectKey = object
        keyRole = OTHER
      } else if (depth === 3 && c === 0x7b && role[2] === SCHEMAS) {
        const hit = known === undefined ? -1 : knownAt(text, i, depth, maxDepth, known, elementIndex)
        if (hit >= 0 && known !== undefined) {
          const hitText = known.texts[hit] as string
          const len = hitText.length
          edits.push(i, i + len, REUSE)
          reused.set(elementIndex, known.schemas[hit] as Schema)
          elements[elementIndex] = { start: i, end: i + len, depth: known.depths[hit] as number, text: hitText }
          // Its fields are not in the tree: nothing after it can repeat them.
          previous = []
          i += len - 1
          continue
        }
        elementStart = i
        elementBase = depth
        elementMax = depth + 1
        expectKey = track
        fieldsKeys = 0
        fields = []
      } else if (depth === IN_SCHEMA && c === 0x5b && elementStart >= 0 && keyRole === FIELDS) {
        inFields = true
        fieldIndex = 0
      } else if (depth === IN_FIELDS && c === 0x7b && inFields) {
        const last = previous[fieldIndex]
        if (last !== undefined && text.slice(i, i + last.text.length) === last.text) {
          // The same field as the last schema's at this position: jumped over, filled in after the
          // parse. It sits as deep as the one it repeats, which passed the depth bound in this scan.
          const len = last.text.length
          edits.push(i, i + len, REUSE_FIELD)
          fills.push(elementIndex, fieldIndex, last.schema, last.field)
          fields[fieldIndex] = last
          if (depth + last.depth > elementMax) elementMax = depth + last.depth
          keyRole = OTHER
          i += len - 1
          continue
        }
        fieldStart = i
        fieldMax = depth + 1
      }
      if (depth >= maxDepth) return depthProblem(maxDepth)
      depth++
      if (depth > elementMax) elementMax = depth
      if (depth > fieldMax) fieldMax = depth
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) depth--
      if (fieldStart >= 0 && depth === IN_FIELDS) {
        fields[fieldIndex] = { text: text.slice(fieldStart, i + 1), depth: fieldMax - IN_FIELDS, schema: elementIndex, field: fieldIndex }
        fieldStart = -1
      } else if (inFields && depth === IN_SCHEMA) {
        inFields = false
      }
      if (elementStart >= 0 && depth === elementBase) {
        elements[elementIndex] = { start: elementStart, end: i + 1, depth: elementMax - elementBase }
        elementStart = -1
        previous = fields
      }
      expectKey = false
      keyRole = OTHER
    } else if (c === 0x2c) { // ,
      if (depth <= 3) {
        if (depth === 3 && role[2] === SCHEMAS) elementIndex++
        expectKey = depth <= 2 && isObject[depth - 1] === true
      } else if (depth === IN_SCHEMA && elementStart >= 0) {
        expectKey = track
      } else if (depth === IN_FIELDS && inFields) {
        fieldIndex++
      }
      keyRole = OTHER
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // a number token
      const start = i
      i = numberTokenEnd(text, i)
      if (keepsExact(text, start, i, false)) {
        edits.push(start, i, MARK)
        marks++
      }
      keyRole = OTHER
      i--
    }
  }
  return { edits, marks, reused, elements, fills }
}

/**
 * Puts each jumped-over field back: the JSON object parsed for the field it repeats, at its place
 * in `metadata.schemas[s].fields`. Fills come in text order, so a field's source is always in place
 * before it is used. False when the tree is not shaped as the scan saw it.
 */
function fillFields (value: unknown, fills: readonly number[]): boolean {
  const schemas = (value as { metadata?: { schemas?: unknown } } | null)?.metadata?.schemas
  if (!Array.isArray(schemas)) return false
  const fieldsOf = (k: number): unknown[] | undefined => {
    const element: unknown = schemas[k]
    const list = typeof element === 'object' && element !== null ? (element as { fields?: unknown }).fields : undefined
    return Array.isArray(list) ? list : undefined
  }
  for (let f = 0; f < fills.length; f += 4) {
    const into = fieldsOf(fills[f] as number)
    const from = fieldsOf(fills[f + 2] as number)
    const j = fills[f + 1] as number
    const source: unknown = from?.[fills[f + 3] as number]
    if (into === undefined || into[j] !== 0 || typeof source !== 'object' || source === null) return false
    into[j] = source
  }
  return true
}

/** Index of the known text found at `at`, the one at `index` tried first; -1 when none is there. */
function knownAt (text: string, at: number, depth: number, maxDepth: number, known: KnownSchemas, index: number): number {
  const { texts, depths } = known
  // A slice and `===` compare as memory (~0.1 µs for a 3.5 KB schema); `startsWith` walked a
  // sliced search string character by character (~18 µs).
  const fits = (k: number): boolean => {
    const t = texts[k] as string
    return text.slice(at, at + t.length) === t && depth + (depths[k] as number) <= maxDepth
  }
  if (index < texts.length && fits(index)) return index
  for (let k = 0; k < texts.length; k++) if (k !== index && fits(k)) return k
  return -1
}

/** A copy of `slice` that does not keep the string it was cut from alive (V8 flattens the concatenation). */
function detached (slice: string): string {
  return ` ${slice}`.slice(1)
}
