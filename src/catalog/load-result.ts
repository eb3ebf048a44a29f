import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { withRefSnapshotsOnly } from '../iceberg/table-metadata.js'
import type { WholeTableMetadata } from '../iceberg/types.js'
import type { Reply } from './context.js'
import type { CatalogStore } from './store.js'

/**
 * LoadTableResult and its ETag (spec §loadTable). The tag is derived from the metadata location
 * and the snapshots mode, so it changes with every commit and differs between `all` and `refs`,
 * as the spec asks; `If-None-Match` with a current tag gets 304. The metadata's text is the
 * store's (written once per version), so an answer copies it rather than writing it again.
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

/** The metadata's text for `mode`: `refs` keeps only the snapshots a branch or tag points at (Java `suppressHistoricalSnapshots`). */
export function metadataText (store: CatalogStore, location: string, metadata: WholeTableMetadata, mode: SnapshotMode): string {
  if (mode === 'all') return store.tableText(location, metadata)
  const refsOnly = withRefSnapshotsOnly(metadata)
  return refsOnly === metadata ? store.tableText(location, metadata) : store.tableText(`${location}\u0000refs`, refsOnly)
}

/** A JSON object's text from members already written as JSON text. */
export function objectText (members: ReadonlyArray<readonly [string, string]>): string {
  return `{${members.map(([key, text]) => `${JSON.stringify(key)}:${text}`).join(',')}}`
}

export function loadResult (store: CatalogStore, metadataLocation: string, metadata: WholeTableMetadata, mode: SnapshotMode = 'all'): Reply {
  const text = objectText([
    ['metadata-location', JSON.stringify(metadataLocation)],
    ['metadata', metadataText(store, metadataLocation, metadata, mode)],
    ['config', '{}']
  ])
  return { status: 200, text, headers: { etag: etagFor(metadataLocation, mode) } }
}
