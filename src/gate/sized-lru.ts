/**
 * A map bounded by entry count and by a total size the caller states for each entry, least
 * recently used first out. Both gate caches (parsed bases by ETag, schema texts) are kept in one.
 *
 * The entry just set always stays, whatever its size: it belongs to the table being judged, whose
 * parsed form is in memory anyway, and refusing it would make every later read of that table start
 * from nothing (a cost that jumps with the table's size). The others leave until the total fits;
 * a lone entry larger than the budget is kept until the next one comes, and counted.
 */
interface SizedLru<V> {
  /** The value, made most recently used. */
  get (key: string): V | undefined
  /** Replaces the entry of `key`, which stays; older entries leave until the total fits. */
  set (key: string, value: V, size: number): void
  delete (key: string): void
  readonly size: number
  /** Sum of the kept entries' sizes. */
  readonly total: number
  /** Entries that left for the budget, and sets that left the total over it (one entry alone larger), so far. */
  readonly evictions: number
  readonly overBudget: number
}

export function createSizedLru<V> (maxEntries: number, maxTotal: number): SizedLru<V> {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, { value: V, size: number }>()
  let total = 0
  let evictions = 0
  let overBudget = 0
  const remove = (key: string): void => {
    const e = entries.get(key)
    if (e === undefined) return
    entries.delete(key)
    total -= e.size
  }
  return {
    get (key) {
      const e = entries.get(key)
      if (e === undefined) return undefined
      entries.delete(key)
      entries.set(key, e)
      return e.value
    },
    set (key, value, size) {
      remove(key)
      if (maxEntries <= 0 || maxTotal <= 0) return
      entries.set(key, { value, size })
      total += size
      for (const oldest of entries.keys()) {
        if ((entries.size <= maxEntries && total <= maxTotal) || oldest === key) break
        remove(oldest)
        evictions++
      }
      if (total > maxTotal) overBudget++
    },
    delete: remove,
    get size () { return entries.size },
    get total () { return total },
    get evictions () { return evictions },
    get overBudget () { return overBudget }
  }
}
