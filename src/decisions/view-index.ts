/**
 * The view index (docs/view-index.md): every view of the catalog and what its current version
 * reads, kept in memory for the gate's synchronous look-ups and in the decision store so replicas
 * share it and it survives restarts. Each replica reloads it from the store every
 * `--view-index-refresh` ms, so a view written through one is known to the others within that.
 */
import type { ViewIndexPort } from '../gate/gate-types.js'
import type { TableRef } from '../iceberg/rest-path.js'
import type { DependentView, ViewReads } from '../iceberg/view-reads.js'
import { DependentsLookup } from '../lineage/dependents.js'
import { viewKey, type CrawlStatus, type StoredView, type ViewIndexStore, type ViewRef } from './view-index-store.js'

interface ViewIndexOptions {
  readonly refreshMs?: number
  readonly now?: () => number
  /** A store call failed: the index goes on from memory. */
  readonly onError?: (err: unknown) => void
  /** A reload from the store succeeded (after a failure, the store is back). */
  readonly onReload?: () => void
}

/** `GET /admin/v1/views/index`. */
export interface ViewIndexStatus {
  readonly views: number
  readonly unparsed: number
  readonly indexedAt?: string
  readonly complete: boolean
  readonly errors: readonly string[]
}

export class ViewIndex implements ViewIndexPort {
  readonly #store: ViewIndexStore
  readonly #refreshMs: number
  readonly #now: () => number
  readonly #onError: (err: unknown) => void
  readonly #onReload: () => void
  #views = new Map<string, StoredView>()
  /** By prefix, built on first use after a change. */
  #lookups: Map<string, DependentsLookup> | undefined
  #crawl: CrawlStatus | undefined
  #timer: NodeJS.Timeout | undefined
  /** Store writes not yet done: a reload must not undo them. */
  #pending = new Set<Promise<void>>()
  /** Counts this replica's own changes, so that a reload can tell one raced it. */
  #changes = 0

  constructor (store: ViewIndexStore, opts: ViewIndexOptions = {}) {
    this.#store = store
    this.#refreshMs = opts.refreshMs ?? 5000
    this.#now = opts.now ?? Date.now
    this.#onError = opts.onError ?? (() => {})
    this.#onReload = opts.onReload ?? (() => {})
  }

  get store (): ViewIndexStore {
    return this.#store
  }

  dependentsOf (table: TableRef): DependentView[] {
    if (this.#lookups === undefined) {
      const byPrefix = new Map<string, StoredView[]>()
      for (const v of this.#views.values()) byPrefix.set(v.prefix, [...(byPrefix.get(v.prefix) ?? []), v])
      this.#lookups = new Map([...byPrefix].map(([prefix, views]) => [prefix, new DependentsLookup(views)]))
    }
    return this.#lookups.get(table.prefix ?? '')?.of([...table.namespace, table.name]) ?? []
  }

  written (view: TableRef, reads: ViewReads): void {
    const stored: StoredView = { ...refOf(view), reads, indexedAt: this.#now() }
    this.#views.set(viewKey(stored), stored)
    this.#lookups = undefined
    this.#changes++
    this.#track(this.#store.put(stored))
  }

  dropped (view: TableRef): void {
    const ref = refOf(view)
    this.#views.delete(viewKey(ref))
    this.#lookups = undefined
    this.#changes++
    this.#track(this.#store.remove(ref))
  }

  renamed (from: TableRef, to: TableRef): void {
    const old = this.#views.get(viewKey(refOf(from)))
    this.dropped(from)
    if (old !== undefined) this.written(to, old.reads)
  }

  /** Views the crawl read; views it did not see (and nobody wrote since it began) are forgotten. */
  async crawled (prefix: string, views: readonly StoredView[], status: CrawlStatus, startedAt: number): Promise<void> {
    for (const v of views) await this.#store.put(v)
    if (status.complete) await this.#store.replaceCrawled(prefix, new Set(views.map(viewKey)), startedAt)
    await this.#store.setStatus(status)
    await this.refresh()
  }

  /**
   * Reloads the index from the store (what this and every other replica indexed). A view written
   * or dropped here while the store was being read may be missing from what was read: that read
   * is not applied, and the reload tries again (at most three times; then memory stays as it is
   * until the next reload).
   */
  async refresh (): Promise<void> {
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = this.#changes
        await Promise.all(this.#pending)
        const [views, status] = await Promise.all([this.#store.list(), this.#store.status()])
        if (this.#changes !== before) continue
        this.#views = new Map(views.map(v => [viewKey(v), v]))
        this.#lookups = undefined
        this.#crawl = status
        this.#onReload()
        return
      }
    } catch (err) {
      this.#onError(err)
    }
  }

  status (): ViewIndexStatus {
    const views = [...this.#views.values()]
    const crawl = this.#crawl
    return {
      views: views.length,
      unparsed: views.filter(v => !v.reads.parsed).length,
      ...(crawl !== undefined && { indexedAt: new Date(crawl.indexedAt).toISOString() }),
      complete: crawl?.complete ?? false,
      errors: crawl === undefined ? ['the catalog has not been crawled yet: only views written through iceguard are known'] : crawl.errors
    }
  }

  start (): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => { void this.refresh() }, this.#refreshMs)
    this.#timer.unref()
  }

  async stop (): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await Promise.all(this.#pending)
  }

  #track (write: Promise<void>): void {
    const p = write.catch(this.#onError).finally(() => this.#pending.delete(p))
    this.#pending.add(p)
  }
}

function refOf (t: TableRef): ViewRef {
  return { prefix: t.prefix ?? '', namespace: t.namespace, name: t.name }
}
