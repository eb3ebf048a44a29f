import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { JsonChunks, withRefSnapshotsOnly } from '../iceberg/table-metadata.js'
import type { WholeTableMetadata } from '../iceberg/types.js'
import type { Reply } from './context.js'
import type { CatalogStore } from './store.js'

/**
 * LoadTableResult and its ETag (spec §loadTable). The tag is derived from the metadata location
 * and the snapshots mode, so it changes with every commit and differs between `all` and `refs`,
 * as the spec asks; `If-None-Match` with a current tag gets 304. The metadata's chunks are the
 * store's (written once per version), handed on rather than written again.
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

/** The metadata file for `mode`: `refs` keeps only the snapshots a branch or tag points at (Java `suppressHistoricalSnapshots`). */
export function metadataFile (store: CatalogStore, location: string, metadata: WholeTableMetadata, mode: SnapshotMode): readonly Buffer[] {
  if (mode === 'all') return store.tableFile(location, metadata)
  const refsOnly = withRefSnapshotsOnly(metadata)
  return refsOnly === metadata ? store.tableFile(location, metadata) : store.tableFile(`${location}\u0000refs`, refsOnly)
}

/** A JSON object's chunks from members already written: JSON text, or chunks handed on as they are. */
export function objectChunks (members: ReadonlyArray<readonly [string, string | readonly Buffer[]]>): Buffer[] {
  const out = new JsonChunks()
  members.forEach(([key, value], i) => {
    out.text(`${i === 0 ? '{' : ','}${JSON.stringify(key)}:`)
    if (typeof value === 'string') out.text(value)
    else for (const chunk of value) out.bytes(chunk)
  })
  return out.text('}').done()
}

export function loadResult (store: CatalogStore, metadataLocation: string, metadata: WholeTableMetadata, mode: SnapshotMode = 'all'): Reply {
  const chunks = objectChunks([
    ['metadata-location', JSON.stringify(metadataLocation)],
    ['metadata', metadataFile(store, metadataLocation, metadata, mode)],
    ['config', '{}']
  ])
  return { status: 200, chunks, headers: { etag: etagFor(metadataLocation, mode) } }
}
