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
 * slice), least recently used table first out; the table just read always stays, however many
 * schemas it has (`sized-lru.ts`), so reuse has no size at which it stops.
 */
import type { KnownSchemas } from '../json/read-base.js'
import { createSizedLru } from './sized-lru.js'

export interface SchemaTexts {
  get (key: string): KnownSchemas | undefined
  /** Replaces the entry of `key`. */
  set (key: string, known: KnownSchemas): void
  readonly size: number
  /** Characters of all kept texts. */
  readonly chars: number
  /** Tables that left for the budget so far. */
  readonly evictions: number
}

interface SchemaTextsOptions {
  /** Most tables kept. Default 1000. */
  readonly maxEntries?: number
  /** Most characters of schema text kept. Default 32 Mi (the parsed schemas take a few times that). */
  readonly maxChars?: number
}

export function createSchemaTexts (options: SchemaTextsOptions = {}): SchemaTexts {
  const lru = createSizedLru<KnownSchemas>(options.maxEntries ?? 1000, options.maxChars ?? 32 * 1024 * 1024)
  return {
    get: key => lru.get(key),
    set (key, known) {
      let size = 0
      for (const text of known.texts) size += text.length
      if (known.texts.length === 0) lru.delete(key)
      else lru.set(key, known, size)
    },
    get size () { return lru.size },
    get chars () { return lru.total },
    get evictions () { return lru.evictions }
  }
}
