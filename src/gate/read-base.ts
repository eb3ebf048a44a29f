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
 */
import { LosslessNumber, parse } from 'lossless-json'
import type { Schema } from '../iceberg/types.js'
import { decodeUtf8, DEFAULT_MAX_DEPTH } from './parse-commit-body.js'
import { MARK_ESCAPE, nativeMessage, NUMBER, numberToken, numberTokenEnd, reviveMarks, SAFE_DIGITS, stringEnd } from './read-json.js'
import type { KnownSchemas } from './schema-texts.js'

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

/** Reads a loadTable answer; `known` are the schemas of the table's previous read, if any. */
export function readBaseText (raw: Buffer, known?: KnownSchemas, maxDepth = 4 * DEFAULT_MAX_DEPTH): BaseText {
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
      if (marks > 0) value = reviveMarks(value, marks)
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
/** What an open container is to the scan. */
const OTHER = 0
const METADATA = 1
const SCHEMAS = 2

const AMBIGUOUS = 1

interface Element {
  readonly start: number
  readonly end: number
  readonly depth: number
  /** The known text, when reused. */
  readonly text?: string
}

interface Scan {
  /** `start, end, kind` triples in text order: a long integer to mark, or a reused schema. */
  readonly edits: number[]
  readonly marks: number
  readonly reused: ReadonlyMap<number, Schema>
  /** `metadata.schemas` elements by index (objects only). */
  readonly elements: Array<Element | undefined>
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
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // a string
      const start = i
      i = stringEnd(text, i)
      if (expectKey) {
        expectKey = false
        if (!track) continue
        // Only keys at the two top levels matter, spelled without escapes (a key spelled with
        // one is a different text; JSON.parse would then see two keys of one name: ambiguous).
        if (depth === 1 && i - start === 9 && text.startsWith('metadata"', start + 1)) {
          keyRole = METADATA
          if (++metadataKeys > 1) return AMBIGUOUS
        } else if (depth === 2 && role[1] === METADATA && i - start === 8 && text.startsWith('schemas"', start + 1)) {
          keyRole = SCHEMAS
          if (++schemasKeys > 1) return AMBIGUOUS
        } else if (depth <= 2 && hasEscape(text, start, i)) {
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
          i += len - 1
          continue
        }
        elementStart = i
        elementBase = depth
        elementMax = depth + 1
      }
      if (depth >= maxDepth) return `nesting deeper than ${maxDepth} levels`
      depth++
      if (depth > elementMax) elementMax = depth
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth > 0) depth--
      if (elementStart >= 0 && depth === elementBase) {
        elements[elementIndex] = { start: elementStart, end: i + 1, depth: elementMax - elementBase }
        elementStart = -1
      }
      expectKey = false
      keyRole = OTHER
    } else if (c === 0x2c) { // ,
      if (depth <= 3) {
        if (depth === 3 && role[2] === SCHEMAS) elementIndex++
        expectKey = depth <= 2 && isObject[depth - 1] === true
      }
      keyRole = OTHER
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) { // a number token
      const start = i
      i = numberTokenEnd(text, i)
      if (numberToken.integer && numberToken.digits > SAFE_DIGITS && NUMBER.test(text.slice(start, i))) {
        edits.push(start, i, MARK)
        marks++
      }
      keyRole = OTHER
      i--
    }
  }
  return { edits, marks, reused, elements }
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

function hasEscape (text: string, start: number, end: number): boolean {
  for (let j = start + 1; j < end; j++) if (text.charCodeAt(j) === 0x5c) return true
  return false
}

/** A copy of `slice` that does not keep the string it was cut from alive (V8 flattens the concatenation). */
function detached (slice: string): string {
  return ` ${slice}`.slice(1)
}
