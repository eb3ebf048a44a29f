import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { idKey, type JsonObject } from './json.js'
import type { Reply } from './context.js'

/**
 * LoadTableResult and its ETag (spec §loadTable). The tag is derived from the metadata location
 * and the snapshots mode, so it changes with every commit and differs between `all` and `refs`,
 * as the spec asks; `If-None-Match` with a current tag gets 304.
 */
export type SnapshotMode = 'all' | 'refs'

export function etagFor (metadataLocation: string, mode: SnapshotMode): string {
  const hash = createHash('sha256').update(metadataLocation).update('\u0000').update(mode).digest('base64url')
  return `"${hash.slice(0, 32)}"`
}

export function matchesEtag (headers: IncomingHttpHeaders, etag: string): boolean {
  const header = headers['if-none-match']
  if (header === undefined) return false
  const bare = etag.slice(1, -1)
  return String(header).split(',').some(raw => {
    const tag = raw.trim().replace(/^W\//, '')
    return tag === '*' || tag === etag || tag === bare
  })
}

/** `snapshots=refs`: only the snapshots a branch or tag points at (Java `suppressHistoricalSnapshots`). */
export function withSnapshots (metadata: JsonObject, mode: SnapshotMode): JsonObject {
  if (mode === 'all') return metadata
  const refs = (metadata.refs ?? {}) as Record<string, JsonObject>
  const keep = new Set(Object.values(refs).map(r => idKey(r['snapshot-id'])))
  const snapshots = ((metadata.snapshots ?? []) as JsonObject[]).filter(s => keep.has(idKey(s['snapshot-id'])))
  return { ...metadata, snapshots }
}

export function loadResult (metadataLocation: string, metadata: JsonObject, mode: SnapshotMode = 'all'): Reply {
  const etag = etagFor(metadataLocation, mode)
  return {
    status: 200,
    body: { 'metadata-location': metadataLocation, metadata: withSnapshots(metadata, mode), config: {} },
    headers: { etag }
  }
}
