/**
 * The view index as the server runs it: loaded from the decision store at start, reloaded every
 * `--view-index-refresh` ms (replicas share it), and crawled from the catalog at start and every
 * `--view-index-interval` seconds with the catalog credential. A crawl that fails is reported in
 * the index's status and logged without secrets; it never stops the server.
 */
import type { Config } from '../main/config.js'
import type { UpstreamClient } from '../upstream/index.js'
import type { DecisionStore } from './decision-store.js'
import { crawlViews, type CatalogCall } from './view-crawl.js'
import { ViewIndex } from './view-index.js'
import { ViewIndexStore } from './view-index-store.js'

export { ViewIndex } from './view-index.js'

interface Logger {
  warn (obj: object, msg: string): void
  info (obj: object, msg: string): void
}

export interface RunningViewIndex {
  readonly index: ViewIndex
  /** Runs one crawl now (tests, and the timer). */
  crawl (): Promise<void>
  stop (): Promise<void>
}

type ViewIndexConfig = Pick<Config, 'viewIndexInterval' | 'viewIndexRefresh' | 'catalogToken' | 'catalogCredential'>

export async function startViewIndex (config: ViewIndexConfig, store: DecisionStore, client: UpstreamClient, log: Logger): Promise<RunningViewIndex> {
  let failing = false
  const index = new ViewIndex(new ViewIndexStore(store), {
    refreshMs: config.viewIndexRefresh,
    onError: (err) => {
      if (!failing) log.warn({ err: (err as Error).message }, 'Cannot read or write the view index in the decision store: the index goes on from memory')
      failing = true
    },
    onReload: () => {
      if (failing) log.info({}, 'the view index reads the decision store again')
      failing = false
    }
  })
  await index.refresh()
  index.start()
  const call: CatalogCall = async (method, path, headers, body) => {
    const res = await client.request({ method, path, headers, ...(body !== undefined && { body }) })
    return { statusCode: res.statusCode, body: res.body }
  }
  const credential = {
    ...(config.catalogToken !== undefined && { token: config.catalogToken }),
    ...(config.catalogCredential !== undefined && { client: config.catalogCredential })
  }
  let running: Promise<void> | undefined
  let stopped = false
  const crawl = async (): Promise<void> => {
    running ??= (async () => {
      try {
        const result = await crawlViews(call, credential)
        if (stopped) return
        await index.crawled(result.prefix, result.views, result.status, result.startedAt)
        log.info({ views: result.views.length, complete: result.status.complete, errors: result.status.errors.length }, 'view index crawled')
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'Cannot crawl the catalog\'s views: the index keeps what it knew')
      } finally {
        running = undefined
      }
    })()
    await running
  }
  let timer: NodeJS.Timeout | undefined
  if (config.viewIndexInterval > 0) {
    // At start-up in the background: the gate serves meanwhile with what the store held.
    void crawl()
    timer = setInterval(() => { void crawl() }, config.viewIndexInterval * 1000)
    timer.unref()
  }
  return {
    index,
    crawl,
    async stop () {
      stopped = true
      clearInterval(timer)
      await running
      await index.stop()
    }
  }
}
