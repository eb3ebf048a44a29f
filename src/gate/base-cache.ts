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
 * was parsed from), least recently used first out; the entry just set always stays (`sized-lru.ts`).
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { TableMetadata } from '../iceberg/types.js'
import { createSizedLru } from './sized-lru.js'

interface BaseCacheOptions {
  /** Most entries kept. Default 1000. */
  readonly maxEntries?: number
  /** Most bytes of upstream answers the kept entries were parsed from. Default 64 MiB. */
  readonly maxBytes?: number
}

export interface BaseCache {
  /** The entry for a table as seen by a caller, made most recently used. */
  get (key: string): { readonly etag: string, readonly metadata: TableMetadata } | undefined
  set (key: string, etag: string, metadata: TableMetadata, bytes: number): void
  delete (key: string): void
  readonly size: number
  readonly bytes: number
  /** Entries that left for the budget so far. */
  readonly evictions: number
}

/** Most caller identities whose digest is remembered; a bound, not a cache size to tune. */
const MAX_DIGESTS = 256
/** Longest header text remembered, so the memo's memory stays small (a few MB at worst). */
const MAX_REMEMBERED_TEXT = 8192

/**
 * Digest of a caller's credential headers, by the headers' text: a client sends the same
 * `Authorization` with every commit, and a SHA-256 per commit was a visible part of the gate's
 * CPU. The map holds credentials as keys, so it stays private to this module, is never iterated
 * or printed, and is bounded (the oldest entry leaves first).
 */
const digests = new Map<string, string>()

/** The cache key of a table path for the caller whose headers these are. */
export function baseCacheKey (path: string, headers: IncomingHttpHeaders): string {
  let material = ''
  for (const name of ['authorization', 'cookie'] as const) {
    const v = headers[name]
    material += `${name}\n${Array.isArray(v) ? v.join('\n') : v ?? ''}\n`
  }
  let digest = digests.get(material)
  if (digest === undefined) {
    digest = createHash('sha256').update(material).digest('base64')
    if (material.length <= MAX_REMEMBERED_TEXT) {
      if (digests.size >= MAX_DIGESTS) digests.delete(digests.keys().next().value as string)
      digests.set(material, digest)
    }
  }
  return `${path}\n${digest}`
}

export function createBaseCache (options: BaseCacheOptions = {}): BaseCache {
  const lru = createSizedLru<{ readonly etag: string, readonly metadata: TableMetadata }>(options.maxEntries ?? 1000, options.maxBytes ?? 64 * 1024 * 1024)
  return {
    get: key => lru.get(key),
    set: (key, etag, metadata, size) => lru.set(key, { etag, metadata }, size),
    delete: key => lru.delete(key),
    get size () { return lru.size },
    get bytes () { return lru.total },
    get evictions () { return lru.evictions }
  }
}
