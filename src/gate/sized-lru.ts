/**
 * A map bounded by entry count and by a total size the caller states for each entry, least
 * recently used first out. Both gate caches (parsed bases by ETag, schema texts) are kept in one.
 */
export interface SizedLru<V> {
  /** The value, made most recently used. */
  get (key: string): V | undefined
  /** Replaces the entry of `key`; a value larger than a quarter of the budget is not kept, since it would push most others out. */
  set (key: string, value: V, size: number): void
  delete (key: string): void
  readonly size: number
  /** Sum of the kept entries' sizes. */
  readonly total: number
}

export function createSizedLru<V> (maxEntries: number, maxTotal: number): SizedLru<V> {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, { value: V, size: number }>()
  let total = 0
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
      if (maxEntries <= 0 || size > maxTotal / 4) return
      entries.set(key, { value, size })
      total += size
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries && total <= maxTotal) break
        remove(oldest)
      }
    },
    delete: remove,
    get size () { return entries.size },
    get total () { return total }
  }
}
