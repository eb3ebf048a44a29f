/**
 * What a table's schema history tells the history rules, kept so that a commit reads only the
 * schemas that are new since the last one: every field id ever assigned (with the path and schema
 * it first lived in), and every name each id carried, in history order.
 *
 * Why: a table's metadata keeps every schema it ever had (spec "Table Metadata": `schemas`, a list
 * that commits append to), so the rules that look at the whole history (FIELD_ID_NOT_REUSED,
 * DROPPED_NAME_REUSED) would otherwise re-walk k schemas of w columns on every commit: O(k·w) per
 * commit, O(k²·w) over a table's life. The summary is O(distinct ids + distinct names), and a
 * commit adds O(w) to it.
 *
 * The summary is append-only and shared: each entry records the position of the schema that brought
 * it, and a view covering the first n schemas ignores the entries of later ones. So a commit judged
 * against an older base (a stale caller, a commit in flight while another lands) sees exactly the
 * history of its own base, never more.
 */
import { indexSchema } from './schema-index.js'
import type { Schema } from './types.js'

/** Where a field id first lived: its path and schema there. */
export interface FirstSeen {
  readonly path: string
  readonly schemaId?: number
}

/** One id that carried a name, and the schema where it first carried it. */
export interface NamedId {
  readonly id: number
  readonly schemaId: number | undefined
}

/** The history of the first `covered` schemas of a table, as the rules read it. */
export interface HistoryView {
  /** How many schemas (a prefix of the table's list) the view covers. */
  readonly covered: number
  /** Where `id` first lived, if any of the covered schemas has it. */
  firstSeen (id: number): FirstSeen | undefined
  /**
   * The ids that carried the name `key` (`caseSensitive`: the exact path, else its lower case), each
   * once, in history order (the schema, then the position, where each first carried it).
   */
  named (key: string, caseSensitive: boolean): readonly NamedId[]
}

interface Seen extends FirstSeen { readonly at: number }
interface Named extends NamedId { readonly at: number }

/** The append-only record behind the views: one per table. */
export interface HistoryLog {
  /** Schema ids of the schemas read so far, in the table's order. */
  readonly schemaIds: ReadonlyArray<number | undefined>
  /** Whether `schema` is the one read at position `at` (its id, then the very object or its fingerprint). */
  holds (at: number, schema: Schema): boolean
  /** Approximate bytes the log holds: what a memory budget counts. */
  readonly bytes: number
  /** Reads `schemas[schemaIds.length ..]`: the caller has checked that the others are the ones already read. */
  extend (schemas: readonly Schema[]): void
  view (covered: number): HistoryView
}

/** Fixed cost of one kept entry (a Map slot and a small object), beside its strings. */
const ENTRY_BYTES = 80

export function createHistoryLog (): HistoryLog {
  const schemaIds: Array<number | undefined> = []
  const prints: number[] = []
  // Objects known to be the schema read at their position (a parsed Schema is never mutated).
  const known = new WeakSet<Schema>()
  const seen = new Map<number, Seen>()
  const exact = new Map<string, Named[]>()
  const folded = new Map<string, Named[]>()
  /** The path each id was last recorded under: a (path, id) pair seen before adds nothing. */
  const lastPath = new Map<number, string>()
  let bytes = 0
  const add = (names: Map<string, Named[]>, key: string, entry: Named): void => {
    const list = names.get(key)
    if (list === undefined) {
      names.set(key, [entry])
      bytes += ENTRY_BYTES + 2 * key.length
    } else if (!list.some(o => o.id === entry.id)) {
      list.push(entry)
      bytes += ENTRY_BYTES / 2
    }
  }
  const log: HistoryLog = {
    schemaIds,
    get bytes () { return bytes },
    holds (at, schema) {
      if (at >= schemaIds.length || schemaIds[at] !== schema.schemaId) return false
      if (known.has(schema)) return true
      if (prints[at] !== fingerprint(schema)) return false
      known.add(schema)
      return true
    },
    extend (schemas) {
      for (let at = schemaIds.length; at < schemas.length; at++) {
        const schema = schemas[at] as Schema
        schemaIds.push(schema.schemaId)
        prints.push(fingerprint(schema))
        known.add(schema)
        bytes += 16
        const index = indexSchema(schema)
        for (let pos = 0; pos < index.size; pos++) {
          const id = index.idAt(pos)
          const path = index.parentAt(pos) < 0 ? index.nameAt(pos) : index.pathAt(pos)
          // Nearly every field is the one the schema before had, under the same path: that pair
          // is recorded already, and nothing else is looked at.
          if (lastPath.get(id) === path) continue
          lastPath.set(id, path)
          if (!seen.has(id)) {
            seen.set(id, { path, at, ...(schema.schemaId === undefined ? {} : { schemaId: schema.schemaId }) })
            // The entry, and the id's slot in `lastPath`.
            bytes += ENTRY_BYTES + 40 + 2 * path.length
          }
          const entry: Named = { id, schemaId: schema.schemaId, at }
          add(exact, path, entry)
          add(folded, path.toLowerCase(), entry)
        }
      }
    },
    view (covered) {
      return {
        covered,
        firstSeen (id) {
          const s = seen.get(id)
          return s === undefined || s.at >= covered ? undefined : s
        },
        named (key, caseSensitive) {
          const list = (caseSensitive ? exact : folded).get(key)
          if (list === undefined) return []
          // Entries are appended in history order: those of later schemas are at the end.
          let n = list.length
          while (n > 0 && (list[n - 1] as Named).at >= covered) n--
          return n === list.length ? list : list.slice(0, n)
        }
      }
    }
  }
  return log
}

/** The history of `schemas`, read from scratch: what every incremental view must equal. */
export function summarize (schemas: readonly Schema[]): HistoryView {
  const log = createHistoryLog()
  log.extend(schemas)
  return log.view(schemas.length)
}

/**
 * A cheap check that a schema under a known id is the one read: the spec never gives an id to two
 * schemas, but a catalog that removes the highest schema (`remove-schemas`) may hand its id to the
 * next one. Top-level ids and names catch such a schema in O(top-level fields).
 */
function fingerprint (schema: Schema): number {
  let h = schema.struct.fields.length | 0
  for (const f of schema.struct.fields) {
    h = (Math.imul(h, 31) + f.id * 7) | 0
    // The whole name, not its length: `a` and `b` under one id are different columns.
    for (let i = 0; i < f.name.length; i++) h = (Math.imul(h, 31) + f.name.charCodeAt(i)) | 0
  }
  return h
}
