/**
 * Which indexed views read a table: the view index's answer to "who does this change break".
 */
import type { DependentView, ViewReads } from '../iceberg/view-reads.js'
import { readsTable } from './view-reads.js'

/** A view as the index keeps it: its identifier and what its current version reads. */
export interface IndexedView {
  readonly namespace: readonly string[]
  readonly name: string
  readonly reads: ViewReads
}

/** The views that read `table` (namespace levels then name), each with what it reads of it. */
export function dependentsOf (views: Iterable<IndexedView>, table: readonly string[]): DependentView[] {
  const out: DependentView[] = []
  for (const view of views) {
    const reads = view.reads.tables.filter(tr => readsTable(tr.table, table))
    if (reads.length === 0) continue
    const columns = new Map<string, DependentView['columns'][number]>()
    for (const tr of reads) for (const c of tr.columns) columns.set(c.name.toLowerCase(), c)
    out.push({
      namespace: view.namespace,
      name: view.name,
      dialects: view.reads.dialects,
      columns: [...columns.values()],
      star: reads.some(tr => tr.star),
      parsed: view.reads.parsed
    })
  }
  const key = (v: DependentView): string => [...v.namespace, v.name].join('\u0000')
  return out.sort((a, b) => key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)
}

/**
 * `dependentsOf` over views grouped by the last part of each table they read (a table's own name,
 * with or without a catalog in front), so a commit looks at the few views that may read its table
 * rather than the whole index. Built once per change of the index.
 */
export class DependentsLookup {
  readonly #byName = new Map<string, IndexedView[]>()

  constructor (views: Iterable<IndexedView>) {
    for (const view of views) {
      for (const name of new Set(view.reads.tables.map(tr => (tr.table.at(-1) ?? '').toLowerCase()))) {
        const list = this.#byName.get(name)
        if (list === undefined) this.#byName.set(name, [view])
        else list.push(view)
      }
    }
  }

  of (table: readonly string[]): DependentView[] {
    return dependentsOf(this.#byName.get((table.at(-1) ?? '').toLowerCase()) ?? [], table)
  }
}
