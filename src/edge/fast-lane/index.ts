/**
 * The fast lane: iceguard's listening socket feeds connections here first, not to node:http.
 *
 * Why: on small requests a `node:http` server with an undici client spends most of its CPU in
 * Node's per-request machinery (IncomingMessage, ServerResponse, undici's request objects and
 * parser callbacks), several times what nginx spends (docs/performance.md). The lane reads and
 * rewrites request heads itself and relays bodies as bytes over pooled keep-alive upstream
 * sockets. It serves every Iceberg REST call (`/v1/...`): pass-through calls are relayed as they
 * stream, `/v1/config` is read whole and rewritten, writes are read whole and judged by the same
 * gate as on node:http; iceguard's own routes are answered through Fastify's `inject`. What it
 * does not frame itself (HTTP/1.0, chunked request bodies, `Expect`, upgrades: rare for Iceberg
 * clients) hands the connection to the node:http server Fastify runs on.
 * `--fast-lane off` leaves every request to node:http.
 */
import type http from 'node:http'
import { maxHeaderSize } from 'node:http'
import type net from 'node:net'
import type tls from 'node:tls'
import type { RouteKind } from '../classify.js'
import type { UpstreamError } from '../../errors.js'
import { metrics, type IceguardMetrics } from '../../metrics/iceguard-metrics.js'
import type { BoundCounter, BoundHistogram } from '../../metrics/hot-series.js'
import { answerKind, answerTimer } from '../answer-kind.js'
import type { GateService } from '../../gate/gate-service.js'
import type { UpstreamClient } from '../../upstream/undici/client.js'
import { ClientConnection, type FastLaneContext } from './client-connection.js'
import { createPoolClient } from '../../upstream/lane/pool-client.js'
import { UpstreamPool } from '../../upstream/lane/upstream-pool.js'

interface FastLaneOptions {
  /** Upstream origin (`http://host:port` or `https://host:port`). */
  readonly origin: string
  /** TLS settings for an `https` upstream on top of Node's defaults (a test's own CA). */
  readonly tls?: tls.ConnectionOptions
  readonly basePath: string
  readonly connections: number
  readonly connectTimeout: number
  readonly headersTimeout: number
  readonly bodyTimeout: number
  readonly upstreamKeepAliveTimeout: number
  /** Client connections' idle timeout (ms). */
  readonly keepAliveTimeout: number
  readonly bodyLimit: number
  readonly retryAfter: number
  /** Largest upstream answer the gate's buffered exchanges read. */
  readonly maxResponseBytes: number
  /** Replaces the upstream's `uri` in `/v1/config`. */
  readonly publicUrl: string | undefined
  /** True once the server is closing. */
  readonly closing: () => boolean
  /** Called for failures worth a log line (never per successful request). */
  readonly onError?: (err: UpstreamError, method: string, url: string) => void
  readonly metrics?: IceguardMetrics
  /** The static admin token: an `Authorization` carrying it is not forwarded. */
  readonly adminToken?: string | undefined
}

export class FastLane {
  readonly #pool: UpstreamPool
  readonly #ctx: FastLaneContext
  readonly #connections = new Set<ClientConnection>()
  /** Buffered exchanges over the fast lane's pool: what the gate uses for the commits it judges here. */
  readonly client: UpstreamClient

  constructor (opts: FastLaneOptions) {
    const url = new URL(opts.origin)
    const m = opts.metrics ?? metrics
    this.#pool = new UpstreamPool({
      host: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
      connections: opts.connections,
      connectTimeout: opts.connectTimeout,
      keepAliveTimeout: opts.upstreamKeepAliveTimeout,
      ...(url.protocol === 'https:' && { tls: opts.tls ?? {} })
    })
    // One bound series per label set seen (few: operation kinds, methods, statuses), as routes/ops.ts does.
    const counters = new Map<string, BoundCounter>()
    const timers = new Map<string, BoundHistogram>()
    const answered = answerTimer(m)
    // Audit ids of the commits gated here (Fastify numbers its own requests `req-N`).
    let requests = 0
    const observe = (method: string, status: number, seconds: number): void => {
      const key = `${status} ${method}`
      let bound = timers.get(key)
      if (bound === undefined) {
        bound = m.upstreamLatency.labels({ method, status: String(status) })
        timers.set(key, bound)
      }
      bound.observe(seconds)
    }
    this.client = createPoolClient({
      pool: this.#pool,
      basePath: opts.basePath,
      upstreamHost: url.host,
      headersTimeout: opts.headersTimeout,
      bodyTimeout: opts.bodyTimeout,
      retryAfter: opts.retryAfter,
      maxResponseBytes: opts.maxResponseBytes,
      adminToken: opts.adminToken,
      observe
    })
    this.#ctx = {
      pool: this.#pool,
      basePath: opts.basePath,
      upstreamHost: url.host,
      bodyLimit: opts.bodyLimit,
      maxHeadBytes: maxHeaderSize,
      keepAliveTimeout: opts.keepAliveTimeout,
      headersTimeout: opts.headersTimeout,
      bodyTimeout: opts.bodyTimeout,
      retryAfter: opts.retryAfter,
      closing: opts.closing,
      handOver: () => { throw new Error('the fast lane is not attached to a server') },
      onError: opts.onError,
      count (kind: RouteKind, method: string, status: number, judged: boolean, headAt: number): void {
        // iceguard's own routes, answered through Fastify's inject, are counted by Fastify's hooks.
        if (kind === 'local') return
        answered(answerKind(kind, method, judged), status, (performance.now() - headAt) / 1000)
        const key = `${status} ${method} ${kind}`
        let bound = counters.get(key)
        if (bound === undefined) {
          bound = m.requests.labels({ route: `iceberg:${kind}`, method, status: String(status) })
          counters.set(key, bound)
        }
        bound.inc()
      },
      observe,
      connections: this.#connections,
      client: this.client,
      publicUrl: opts.publicUrl,
      adminToken: opts.adminToken,
      gate: undefined,
      local: undefined,
      requestId: () => `lane-${(++requests).toString(36)}`,
      onGateFault: undefined
    }
  }

  /**
   * Gated commits are judged in the fast lane from now on, by `gate` (a gate service over
   * `this.client`), instead of being handed to node:http. Why: a schema commit's latency is two
   * upstream round trips plus the judgement, and node:http, Fastify and undici added ~0.2 ms to it
   * (docs/performance.md).
   */
  useGate (gate: GateService, onFault?: (err: unknown) => void): void {
    const ctx = this.#ctx as { gate: FastLaneContext['gate'], onGateFault: FastLaneContext['onGateFault'] }
    ctx.gate = async (request) => await gate.handle(request)
    ctx.onGateFault = onFault
  }

  /** The lane pool's connection budget, for undici's sockets to count against (src/upstream/index.ts). */
  reserve (cb: (err: Error | null, release?: () => void) => void): void {
    this.#pool.reserve(cb)
  }

  /**
   * Requests for iceguard's own routes are answered in the lane by `local` (Fastify's `inject`)
   * instead of handing the connection to node:http, so that a connection that asked for /healthz
   * or the admin API keeps the lane for its Iceberg calls.
   */
  useLocal (local: NonNullable<FastLaneContext['local']>): void {
    (this.#ctx as { local: FastLaneContext['local'] }).local = local
  }

  /**
   * Takes over `server`'s new connections. node:http's own connection listener is kept and called
   * for the connections handed over (equivalent to `server.emit('connection', socket)` on a server
   * that would not route it back here). `closeIdleConnections` closes idle fast-lane connections too.
   */
  attach (server: http.Server): void {
    const listeners = server.listeners('connection') as Array<(socket: net.Socket) => void>
    const httpConnection = listeners[0]
    if (listeners.length !== 1 || httpConnection === undefined) throw new Error('expected node:http\'s connection listener alone')
    server.removeListener('connection', httpConnection)
    const ctx = this.#ctx as { handOver: FastLaneContext['handOver'] }
    ctx.handOver = (socket) => { httpConnection.call(server, socket) }
    server.on('connection', (socket: net.Socket) => { new ClientConnection(socket, this.#ctx) }) // eslint-disable-line no-new
    const closeIdle = server.closeIdleConnections.bind(server)
    server.closeIdleConnections = () => {
      closeIdle()
      this.closeIdle()
    }
  }

  /** Closes fast-lane connections between requests (shutdown). */
  closeIdle (): void {
    for (const conn of this.#connections) if (conn.idle) conn.socket.destroy()
  }

  /** Closes the upstream pool: idle sockets now, busy ones when their exchange ends. */
  close (): void {
    this.closeIdle()
    this.#pool.close()
  }
}
