/**
 * Per-key async mutex. Commits on one table run one after another; a caller that needs several
 * keys (a transaction, a rename) takes them in sorted order so two such callers cannot deadlock.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>()

  async run<T> (keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const ordered = [...new Set(keys)].sort()
    const releases: Array<() => void> = []
    try {
      for (const key of ordered) releases.push(await this.#acquire(key))
      return await fn()
    } finally {
      for (const release of releases.reverse()) release()
    }
  }

  async #acquire (key: string): Promise<() => void> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>(resolve => { release = resolve })
    const tail = previous.then(() => current)
    this.#tails.set(key, tail)
    await previous
    return () => {
      release()
      // Forget the key once nobody queued behind us, so the map does not grow with every table.
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
  }
}
