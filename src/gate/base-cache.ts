/**
 * Parsed base metadata kept by the upstream's `ETag`, so a schema commit on a table whose metadata
 * has not changed skips the read and the parse (RFC 9110 §13.1.2 If-None-Match, §15.4.5 304).
 *
 * The cache never decides anything on its own. Every schema commit still sends its base load, with
 * the caller's own headers and `If-None-Match`; only a 304 from the upstream, to that caller, on
 * that table, brings the parsed form back. So the upstream judges access on every commit and a
 * commit is never validated against metadata the upstream has not just confirmed as current.
 * Entries are kept per table path and per caller identity (a digest of `Authorization` and
 * `Cookie`, never the secret itself), so one caller's cached metadata can never answer another's.
 *
 * Memory is bounded by entry count and by approximate size (the length of the answer each entry
 * was parsed from), least recently used first out.
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { TableMetadata } from '../iceberg/types.js'

export interface BaseCacheOptions {
  /** Most entries kept. Default 1000. */
  readonly maxEntries?: number
  /** Most bytes of upstream answers the kept entries were parsed from. Default 64 MiB. */
  readonly maxBytes?: number
}

interface Entry {
  readonly etag: string
  readonly metadata: TableMetadata
  readonly bytes: number
}

export interface BaseCache {
  /** The entry for a table as seen by a caller, made most recently used. */
  get (key: string): { readonly etag: string, readonly metadata: TableMetadata } | undefined
  set (key: string, etag: string, metadata: TableMetadata, bytes: number): void
  delete (key: string): void
  readonly size: number
  readonly bytes: number
}

/** The cache key of a table path for the caller whose headers these are. */
export function baseCacheKey (path: string, headers: IncomingHttpHeaders): string {
  const digest = createHash('sha256')
  for (const name of ['authorization', 'cookie'] as const) {
    const v = headers[name]
    digest.update(`${name}\n${Array.isArray(v) ? v.join('\n') : v ?? ''}\n`)
  }
  return `${path}\n${digest.digest('base64')}`
}

export function createBaseCache (options: BaseCacheOptions = {}): BaseCache {
  const maxEntries = options.maxEntries ?? 1000
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Entry>()
  let bytes = 0

  const remove = (key: string): void => {
    const e = entries.get(key)
    if (e === undefined) return
    entries.delete(key)
    bytes -= e.bytes
  }

  return {
    get (key) {
      const e = entries.get(key)
      if (e === undefined) return undefined
      entries.delete(key)
      entries.set(key, e)
      return e
    },
    set (key, etag, metadata, size) {
      remove(key)
      // One answer larger than a quarter of the budget would evict most of the rest: not kept.
      if (maxEntries <= 0 || size > maxBytes / 4) return
      entries.set(key, { etag, metadata, bytes: size })
      bytes += size
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break
        remove(oldest)
      }
    },
    delete: remove,
    get size () { return entries.size },
    get bytes () { return bytes }
  }
}
