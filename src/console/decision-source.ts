/**
 * Where the console reads decisions from: the shape of `GET /admin/v1/decisions`, behind an
 * interface so the server can hand the console any store (the decision log, or the admin API
 * itself) and tests an in-memory list.
 */
import { namespaceName, type TableRef } from '../iceberg/rest-path.js'

export interface DecisionFinding {
  readonly rule: string
  readonly severity: string
  readonly message: string
  readonly 'field-id'?: number | null
  readonly path?: string | null
}

export interface DecisionRecord {
  readonly id: string
  /** Shared by the decisions of one transaction. */
  readonly 'request-id'?: string
  /** ISO 8601 instant. */
  readonly time: string
  readonly table: Pick<TableRef, 'namespace' | 'name'>
  readonly kind: string
  /** allow, warn, deny, conflict, override… */
  readonly verdict: string
  readonly principal?: string | null
  readonly findings: readonly DecisionFinding[]
  /** The schema diff summary: a sentence, or a list of changes. */
  readonly changes?: unknown
  /** The override token used, if any: its id, or a record naming it. */
  readonly override?: unknown
}

export interface DecisionFilters {
  /** Namespace levels joined by dots. */
  readonly namespace?: string
  readonly table?: string
  readonly verdict?: string
  readonly rule?: string
  readonly pageToken?: string
  readonly pageSize?: number
}

export interface DecisionPage {
  /** Newest first. */
  readonly decisions: readonly DecisionRecord[]
  readonly nextPageToken?: string | undefined
}

/** The caller as the console saw it: the `Authorization` a source may pass on to the admin API. */
export interface SourceCaller {
  readonly authorization?: string | undefined
}

export interface DecisionSource {
  list (filters: DecisionFilters, caller: SourceCaller): Promise<DecisionPage>
  /** One decision by id; undefined when there is none with that id. */
  get (id: string, caller: SourceCaller): Promise<DecisionRecord | undefined>
}

/** A fixed list, filtered and paged as the query API does; for tests and demonstrations. */
export function memoryDecisionSource (records: readonly DecisionRecord[]): DecisionSource {
  const sorted = [...records].sort((a, b) => Date.parse(b.time) - Date.parse(a.time))
  return {
    async list (f) {
      const hits = sorted.filter(d =>
        (f.namespace === undefined || namespaceName(d.table.namespace) === f.namespace) &&
        (f.table === undefined || d.table.name === f.table) &&
        (f.verdict === undefined || d.verdict === f.verdict) &&
        (f.rule === undefined || d.findings.some(x => x.rule === f.rule)))
      const start = f.pageToken === undefined ? 0 : Number(f.pageToken)
      const size = f.pageSize ?? 50
      const end = start + size
      return { decisions: hits.slice(start, end), nextPageToken: end < hits.length ? String(end) : undefined }
    },
    async get (id) {
      return sorted.find(d => d.id === id)
    }
  }
}
