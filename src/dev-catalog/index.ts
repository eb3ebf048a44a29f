import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { KeyedLock } from './lock.js'
import { createCatalogServer, type RecordedRequest } from './server.js'
import { CatalogStore } from './store.js'

/**
 * The embedded development catalog: a spec-faithful Iceberg REST catalog on a loopback port,
 * persisted to a local warehouse folder (or kept in memory). It accepts any well-formed change,
 * as real catalogs do; it holds none of the gate's evolution rules.
 */

export type { RecordedRequest } from './server.js'

export interface EmbeddedCatalogOptions {
  /** Warehouse folder (metadata files and the catalog state). Default: DEFAULT_WAREHOUSE. */
  warehouse?: string
  /** Keep everything in memory: nothing is written to disk. */
  memory?: boolean
  /** Default 127.0.0.1. */
  host?: string
  /** Default 0 (any free port). */
  port?: number
  /** Advertised as `overrides.prefix` in /v1/config; routes answer with and without it. */
  prefix?: string
  /** Serve under a base path, e.g. `/catalog`. */
  basePath?: string
  /** Record every request received (raw body bytes) in `requests`. */
  record?: boolean
}

export interface EmbeddedCatalog {
  /** `http://host:port[basePath]`, ready for clients and for the proxy's upstream URL. */
  url: string
  /** Absolute warehouse folder; undefined in memory mode. */
  warehouse?: string
  requests: RecordedRequest[]
  clearRequests (): void
  close (): Promise<void>
}

/** `./warehouse` under the directory the process started in. */
export const DEFAULT_WAREHOUSE: string = path.resolve(process.cwd(), 'warehouse')

export async function startEmbeddedCatalog (opts: EmbeddedCatalogOptions = {}): Promise<EmbeddedCatalog> {
  const memory = opts.memory === true
  // In memory mode the folder only roots table locations, where engines write their data files.
  const root = opts.warehouse ?? (memory ? path.join(os.tmpdir(), 'iceguard-memory-warehouse') : DEFAULT_WAREHOUSE)
  const store = await CatalogStore.open({ root, memory })
  const requests: RecordedRequest[] = []
  const basePath = (opts.basePath ?? '').replace(/\/+$/, '')
  if (basePath !== '' && !basePath.startsWith('/')) throw new Error(`basePath must start with '/': ${basePath}`)
  const server = createCatalogServer({
    store,
    locks: new KeyedLock(),
    prefix: opts.prefix,
    basePath,
    record: opts.record === true ? requests : undefined
  })
  const host = opts.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const urlHost = host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${urlHost}:${port}${basePath}`,
    warehouse: memory ? undefined : store.root,
    requests,
    clearRequests: () => { requests.length = 0 },
    close: async () => {
      await new Promise<void>(resolve => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  }
}
