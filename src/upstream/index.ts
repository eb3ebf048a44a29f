/**
 * The upstream connection: one keep-alive pool shared by the streaming forwarder and the
 * buffered client, sized and timed from the configuration.
 */
import type { IncomingMessage } from 'node:http'
import type tls from 'node:tls'
import { Pool } from 'undici'
import type { Config } from '../config.js'
import type { UpstreamError } from '../errors.js'
import { createUpstreamClient, type UpstreamClient } from './client.js'
import { StreamForwarder } from './stream-forward.js'

export type { UpstreamClient, UpstreamRequest, UpstreamResponse } from './client.js'
export { createUpstreamClient } from './client.js'
export { StreamForwarder, type ForwardOptions } from './stream-forward.js'
export { forwardRequestHeaders, relayResponseHeaders, headersToObject } from './headers.js'

export interface Upstream {
  readonly origin: string
  readonly basePath: string
  readonly pool: Pool
  readonly forwarder: StreamForwarder
  readonly client: UpstreamClient
  close (): Promise<void>
}

export interface UpstreamOptions {
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
Partial<Pick<Config, 'upstreamKeepAliveTimeout' | 'upstreamMaxResponse'>>

export function createUpstream (config: UpstreamConfig, options: UpstreamOptions = {}): Upstream {
  const origin = config.upstreamOrigin
  if (origin === undefined) throw new Error('createUpstream needs an upstream URL')
  const pool = new Pool(origin, {
    connections: config.upstreamConnections,
    // One request per connection at a time: POSTs must never be replayed by a pipeline reset.
    pipelining: 1,
    keepAliveTimeout: config.upstreamKeepAliveTimeout ?? 30_000,
    connect: { timeout: config.upstreamConnectTimeout, ...options.tls },
    headersTimeout: config.upstreamHeadersTimeout,
    bodyTimeout: config.upstreamBodyTimeout
  })
  const basePath = config.upstreamBasePath
  const forwarder = new StreamForwarder(pool, { basePath, retryAfter: config.retryAfter, onError: options.onError })
  const client = options.client ?? createUpstreamClient(pool, { basePath, retryAfter: config.retryAfter, maxResponseBytes: config.upstreamMaxResponse })
  return {
    origin,
    basePath,
    pool,
    forwarder,
    client,
    close: () => pool.close()
  }
}
