/**
 * `startCatalog(t, opts)`: the embedded development catalog in memory, recording what it receives,
 * closed on teardown.
 */
import type { Test } from 'tap'
import { startEmbeddedCatalog } from '../../src/dev-catalog/index.js'
import { isOpener } from './transports.js'

export type CatalogOptions = NonNullable<Parameters<typeof startEmbeddedCatalog>[0]>
export type RunningCatalog = Awaited<ReturnType<typeof startEmbeddedCatalog>>

export async function startCatalog (t: Test, opts: CatalogOptions = {}): Promise<RunningCatalog> {
  const catalog = await startEmbeddedCatalog({ memory: true, record: true, host: '127.0.0.1', port: 0, ...opts })
  t.teardown(() => catalog.close())
  // The transport matrix's `config first` opener is not the test's (transports.ts).
  const record = catalog.requests.push.bind(catalog.requests)
  catalog.requests.push = (...items) => record(...items.filter(r => !isOpener(r.headers)))
  return catalog
}
