/**
 * The schema-history summaries of the tables seen lately (`history-summary.ts`), keyed by table
 * uuid and checked against the schema ids each covers, so that a commit reads only the schemas
 * that are new to it.
 *
 * A summary is used for a base only when the base's schemas start with the ones the summary has
 * read, in the same order: same schema ids, and each the very object read or one with the same
 * fingerprint (`history-summary.ts`). Commits append schemas, and a schema id names one schema
 * (spec "Schemas"), so those schemas are the ones already read.
 * A base with more schemas extends the summary; one with fewer sees only its own prefix; any other
 * list (a schema removed, a schema without id) is read from scratch and replaces the summary.
 * What is kept is derived from metadata the upstream served; a view shows only what the caller's
 * own base holds, so nothing of another caller's read leaks into a judgement.
 *
 * Only metadata an upstream served updates or uses the kept summaries (`markServed`, called where
 * a loadTable answer is read): metadata a caller wrote itself (a dry run with `metadata` in its
 * body) could otherwise plant schemas under a real table's uuid for later commits to be judged
 * by. Any other base gets a summary of its own, read whole.
 *
 * Memory is bounded by a budget in bytes (the summaries' approximate size), whole tables out,
 * least recently used first. The table in use is never evicted by its own growth: its history is
 * needed to judge it, and dropping it would only make the next commit read it all again. A table
 * alone larger than the budget is kept until another table needs the room, and counted.
 */
import { createHistoryLog, type HistoryLog, type HistoryView } from './history-summary.js'
import type { Schema, TableMetadata } from './types.js'

/** What happened to a table's summary on one read, for metrics. */
export type HistoryOutcome = 'reused' | 'extended' | 'built' | 'evicted' | 'over-budget'

interface HistoryStoreOptions {
  /** Most bytes of summaries kept. Default 64 MiB; 0 keeps nothing (every read from scratch). */
  readonly maxBytes?: number
  readonly onOutcome?: (outcome: HistoryOutcome) => void
}

interface HistoryStore {
  /** The history of `base.schemas`, read incrementally where a summary of this table is kept. */
  historyOf (base: TableMetadata): HistoryView
  readonly tables: number
  readonly bytes: number
}

const DEFAULT_HISTORY_BYTES = 64 * 1024 * 1024

interface Kept { log: HistoryLog, bytes: number }

export function createHistoryStore (options: HistoryStoreOptions = {}): HistoryStore {
  const maxBytes = options.maxBytes ?? DEFAULT_HISTORY_BYTES
  const count = options.onOutcome ?? (() => {})
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const kept = new Map<string, Kept>()
  const views = new WeakMap<TableMetadata, HistoryView>()
  let total = 0
  const fresh = (base: TableMetadata): HistoryLog => {
    const log = createHistoryLog()
    log.extend(base.schemas)
    return log
  }
  const keep = (uuid: string, entry: Kept): void => {
    kept.delete(uuid)
    kept.set(uuid, entry)
    const before = entry.bytes
    entry.bytes = entry.log.bytes
    total += entry.bytes - before
    for (const [oldest, e] of kept) {
      if (total <= maxBytes || oldest === uuid) break
      kept.delete(oldest)
      total -= e.bytes
      count('evicted')
    }
    if (total > maxBytes) count('over-budget')
  }
  const read = (base: TableMetadata): HistoryView => {
    const schemas = base.schemas
    const uuid = base.tableUuid
    if (!servedBases.has(base) || uuid === undefined || uuid === '' || maxBytes <= 0 || schemas.some(s => s.schemaId === undefined)) {
      count('built')
      return fresh(base).view(schemas.length)
    }
    const entry = kept.get(uuid)
    if (entry !== undefined && covers(entry.log, base)) {
      const had = entry.log.schemaIds.length
      if (schemas.length > had) entry.log.extend(schemas)
      count(schemas.length > had ? 'extended' : 'reused')
      keep(uuid, entry)
      return entry.log.view(schemas.length)
    }
    count('built')
    if (entry !== undefined) { kept.delete(uuid); total -= entry.bytes }
    const log = fresh(base)
    keep(uuid, { log, bytes: 0 })
    return log.view(schemas.length)
  }
  return {
    historyOf (base) {
      // Several rules ask for the same base's history: one read per base object.
      let view = views.get(base)
      if (view === undefined) {
        view = read(base)
        views.set(base, view)
      }
      return view
    },
    get tables () { return kept.size },
    get bytes () { return total }
  }
}

/** The base's schemas and the read ones agree where both have a schema. */
function covers (log: HistoryLog, base: TableMetadata): boolean {
  const n = Math.min(log.schemaIds.length, base.schemas.length)
  for (let i = 0; i < n; i++) if (!log.holds(i, base.schemas[i] as Schema)) return false
  return true
}

/** Metadata parsed from an upstream's answer (never a caller's own text). */
const servedBases = new WeakSet<TableMetadata>()

/** Marks `metadata` as parsed from an upstream catalog's loadTable answer: its history may be kept and reused. */
export function markServed (metadata: TableMetadata): void {
  servedBases.add(metadata)
}

/** Whether `metadata` was marked by `markServed`. */
export function isServed (metadata: TableMetadata): boolean {
  return servedBases.has(metadata)
}

let shared: HistoryStore = createHistoryStore()

/** The process's store, which the history rules read through. */
export function tableHistory (base: TableMetadata): HistoryView {
  return shared.historyOf(base)
}

/** Replaces the process's store (start-up configuration, tests); returns it. */
export function configureTableHistory (options: HistoryStoreOptions): HistoryStore {
  shared = createHistoryStore(options)
  return shared
}
