/**
 * The upstream connection: one keep-alive pool shared by the streaming forwarder and the
 * buffered client, sized and timed from the configuration.
 */
import type { IncomingMessage } from 'node:http'
import type tls from 'node:tls'
import { buildConnector, Pool } from 'undici'
import type { Config } from '../main/config.js'
import type { UpstreamError } from '../errors.js'
import { createUpstreamClient, type UpstreamClient } from './undici/client.js'
import { StreamForwarder } from './undici/stream-forward.js'

export type { UpstreamClient } from './undici/client.js'
export { StreamForwarder } from './undici/stream-forward.js'
export { forwardRequestHeaders } from './headers.js'

export interface Upstream {
  readonly origin: string
  readonly basePath: string
  readonly pool: Pool
  readonly forwarder: StreamForwarder
  readonly client: UpstreamClient
  close (): Promise<void>
}

/** A connection budget shared with another pool (the fast lane's `UpstreamPool.reserve`). */
export interface ConnectionBudget {
  reserve (cb: (err: Error | null, release?: () => void) => void): void
}

export interface UpstreamOptions {
  /**
   * Counts undici's sockets against this budget instead of a `--upstream-connections` of their
   * own: with the fast lane on, both draw from the lane pool's one budget.
   */
  readonly budget?: ConnectionBudget
  /**
   * The buffered client to use instead of one over this pool: the fast lane's, so that `/v1/config`
   * and the gate's exchanges share one pool and one implementation on both transports.
   */
  readonly client?: UpstreamClient
  /** TLS settings for an `https` upstream on top of Node's defaults (tests: their own CA). */
  readonly tls?: tls.ConnectionOptions
  readonly onError?: (err: UpstreamError | Error, req: IncomingMessage) => void
}

type UpstreamConfig = Pick<Config, 'upstreamOrigin' | 'upstreamBasePath' | 'upstreamConnectTimeout' |
'upstreamHeadersTimeout' | 'upstreamBodyTimeout' | 'upstreamConnections' | 'retryAfter'> &
Partial<Pick<Config, 'upstreamKeepAliveTimeout' | 'upstreamMaxResponse' | 'adminToken'>>

export function createUpstream (config: UpstreamConfig, options: UpstreamOptions = {}): Upstream {
  const origin = config.upstreamOrigin
  if (origin === undefined) throw new Error('createUpstream needs an upstream URL')
  const pool = new Pool(origin, {
    connections: config.upstreamConnections,
    // One request per connection at a time: POSTs must never be replayed by a pipeline reset.
    pipelining: 1,
    // Sharing a budget, an idle socket holds a slot the other pool may wait for: kept briefly.
    keepAliveTimeout: options.budget === undefined ? config.upstreamKeepAliveTimeout ?? 30_000 : Math.min(config.upstreamKeepAliveTimeout ?? 30_000, SHARED_KEEP_ALIVE),
    connect: options.budget === undefined
      ? { timeout: config.upstreamConnectTimeout, ...options.tls }
      : budgeted(options.budget, buildConnector({ timeout: config.upstreamConnectTimeout, ...options.tls })),
    headersTimeout: config.upstreamHeadersTimeout,
    bodyTimeout: config.upstreamBodyTimeout
  })
  const basePath = config.upstreamBasePath
  const forwarder = new StreamForwarder(pool, { basePath, retryAfter: config.retryAfter, onError: options.onError, adminToken: config.adminToken })
  const client = options.client ?? createUpstreamClient(pool, { basePath, retryAfter: config.retryAfter, maxResponseBytes: config.upstreamMaxResponse, adminToken: config.adminToken })
  return {
    origin,
    basePath,
    pool,
    forwarder,
    client,
    close: () => pool.close()
  }
}

/** How long undici keeps an idle socket when it shares a budget (its own default). */
const SHARED_KEEP_ALIVE = 4_000

/** A connector that opens a socket only once `budget` grants a slot, and gives it back on close. */
function budgeted (budget: ConnectionBudget, connect: buildConnector.connector): buildConnector.connector {
  return (opts, callback) => {
    budget.reserve((err, release) => {
      if (err !== null || release === undefined) {
        callback(err ?? new Error('no upstream connection slot'), null)
        return
      }
      connect(opts, (...args) => {
        if (args[0] !== null) {
          release()
          callback(args[0], null)
          return
        }
        args[1].once('close', release)
        callback(null, args[1])
      })
    })
  }
}
