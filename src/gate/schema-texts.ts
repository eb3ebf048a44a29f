/**
 * The schemas of each table's latest base, kept with the exact JSON text each was parsed from, so
 * that the next read of that table parses again only the schemas whose text changed.
 *
 * Why: a table's ETag changes with every commit (a data commit adds a snapshot, a schema commit a
 * schema), so the next schema commit's base load misses the ETag cache (`base-cache.ts`) although
 * all but one of its schemas are the same. On the benchmark's base (50 columns, 20 schemas of
 * history, ~80 KB) the schemas are 98% of the bytes and most of the read: reusing them took the
 * read after a commit from ~1 ms to 0.11–0.19 ms of CPU (bench/gate-parts.ts, docs/performance.md).
 *
 * A text is reused only where the answer holds exactly that text (`read-base.ts` compares it
 * character for character), so what is reused is what parsing the answer would give: a Schema is
 * an immutable value of its text. That is also why entries are per table path and shared by all
 * callers: nothing is taken from an entry that the caller's own answer does not contain. Memory is
 * bounded by the characters of the kept texts (copies: an answer is never kept alive behind a
 * slice), least recently used table first out.
 */
import type { Schema } from '../iceberg/types.js'

/** The schemas of one read, in the order of the answer's `schemas` array. */
export interface KnownSchemas {
  readonly texts: readonly string[]
  readonly schemas: readonly Schema[]
  /** Deepest nesting inside each text, for the reader's depth bound. */
  readonly depths: readonly number[]
}

export interface SchemaTexts {
  get (key: string): KnownSchemas | undefined
  /** Replaces the entry of `key`. */
  set (key: string, known: KnownSchemas): void
  readonly size: number
  /** Characters of all kept texts. */
  readonly chars: number
}

export interface SchemaTextsOptions {
  /** Most tables kept. Default 1000. */
  readonly maxEntries?: number
  /** Most characters of schema text kept. Default 32 Mi (the parsed schemas take a few times that). */
  readonly maxChars?: number
}

export function createSchemaTexts (options: SchemaTextsOptions = {}): SchemaTexts {
  const maxEntries = options.maxEntries ?? 1000
  const maxChars = options.maxChars ?? 32 * 1024 * 1024
  // Insertion order is use order: an entry is re-inserted when used.
  const entries = new Map<string, { known: KnownSchemas, chars: number }>()
  let chars = 0
  const remove = (key: string): void => {
    const e = entries.get(key)
    if (e === undefined) return
    entries.delete(key)
    chars -= e.chars
  }
  return {
    get (key) {
      const e = entries.get(key)
      if (e === undefined) return undefined
      entries.delete(key)
      entries.set(key, e)
      return e.known
    },
    set (key, known) {
      remove(key)
      let size = 0
      for (const text of known.texts) size += text.length
      // A table whose schemas take more than a quarter of the budget would push most others out: not kept.
      if (maxEntries <= 0 || size > maxChars / 4 || known.texts.length === 0) return
      entries.set(key, { known, chars: size })
      chars += size
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries && chars <= maxChars) break
        remove(oldest)
      }
    },
    get size () { return entries.size },
    get chars () { return chars }
  }
}
