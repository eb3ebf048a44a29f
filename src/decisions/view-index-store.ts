/**
 * The view index as the decision store keeps it (migration 4): one row per view with what its
 * current version reads (`ViewReads` as JSON; never the SQL text), and one row with the last
 * crawl's outcome. Shared by replicas on PostgreSQL, kept across restarts on SQLite.
 */
import type { ViewReads } from '../iceberg/view-reads.js'
import type { DecisionStore } from './decision-store.js'
import type { Row } from './sql-driver.js'

/** A view's place in the catalog: the route's prefix ('' when none), namespace levels, name. */
export interface ViewRef {
  readonly prefix: string
  readonly namespace: readonly string[]
  readonly name: string
}

export interface StoredView extends ViewRef {
  readonly reads: ViewReads
  readonly indexedAt: number
}

export interface CrawlStatus {
  readonly indexedAt: number
  readonly complete: boolean
  /** What the crawl could not read: paths and statuses, never bodies or credentials. */
  readonly errors: readonly string[]
}

export function viewKey (ref: ViewRef): string {
  return JSON.stringify([ref.prefix, ...ref.namespace, ref.name])
}

export class ViewIndexStore {
  constructor (private readonly store: DecisionStore) {}

  async put (view: StoredView): Promise<void> {
    await this.store.migrate()
    const key = viewKey(view)
    await this.store.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM view_index WHERE view_key = ?', [key])
      await tx.run('INSERT INTO view_index (view_key, prefix, namespace, view_name, reads, indexed_at) VALUES (?, ?, ?, ?, ?, ?)',
        [key, view.prefix, JSON.stringify(view.namespace), view.name, JSON.stringify(view.reads), view.indexedAt])
    })
  }

  async remove (ref: ViewRef): Promise<void> {
    await this.store.migrate()
    await this.store.driver.run('DELETE FROM view_index WHERE view_key = ?', [viewKey(ref)])
  }

  /** Every view of the index. */
  async list (): Promise<StoredView[]> {
    await this.store.migrate()
    const rows = await this.store.driver.query('SELECT prefix, namespace, view_name, reads, indexed_at FROM view_index')
    return rows.map(toView).filter((v): v is StoredView => v !== undefined)
  }

  /**
   * A crawl's views replace those of its prefix that it did not see (dropped outside iceguard);
   * views written after the crawl started are kept.
   */
  async replaceCrawled (prefix: string, seen: ReadonlySet<string>, startedAt: number): Promise<void> {
    await this.store.migrate()
    const rows = await this.store.driver.query('SELECT view_key FROM view_index WHERE prefix = ? AND indexed_at < ?', [prefix, startedAt])
    for (const row of rows) {
      const key = String(row.view_key)
      if (!seen.has(key)) await this.store.driver.run('DELETE FROM view_index WHERE view_key = ? AND indexed_at < ?', [key, startedAt])
    }
  }

  async setStatus (status: CrawlStatus): Promise<void> {
    await this.store.migrate()
    await this.store.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM view_index_status WHERE id = 1')
      await tx.run('INSERT INTO view_index_status (id, indexed_at, complete, errors) VALUES (1, ?, ?, ?)',
        [status.indexedAt, status.complete ? 1 : 0, JSON.stringify(status.errors)])
    })
  }

  async status (): Promise<CrawlStatus | undefined> {
    await this.store.migrate()
    const row = (await this.store.driver.query('SELECT indexed_at, complete, errors FROM view_index_status WHERE id = 1'))[0]
    if (row === undefined) return undefined
    return { indexedAt: Number(row.indexed_at), complete: Number(row.complete) === 1, errors: parseList(row.errors) }
  }
}

function toView (row: Row): StoredView | undefined {
  try {
    const namespace = JSON.parse(String(row.namespace)) as unknown
    const reads = JSON.parse(String(row.reads)) as ViewReads
    if (!Array.isArray(namespace)) return undefined
    return { prefix: String(row.prefix), namespace: namespace.map(String), name: String(row.view_name), reads, indexedAt: Number(row.indexed_at) }
  } catch {
    return undefined
  }
}

function parseList (v: unknown): string[] {
  try {
    const list = JSON.parse(String(v)) as unknown
    return Array.isArray(list) ? list.map(String) : []
  } catch {
    return []
  }
}
