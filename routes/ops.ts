/**
 * Operations endpoints: `GET /healthz` (the process serves HTTP), `GET /readyz` (the upstream
 * catalog answers `GET /v1/config`) and `GET /metrics` (Prometheus text format).
 *
 * Registered with fastify-plugin so its hooks see every request: Fastify's own routes are counted
 * by route pattern; requests the front door streams past Fastify (most `/v1/**` traffic) are
 * counted from the server by the Iceberg operation they are (`iceberg:passthrough`,
 * `iceberg:update-table`, …), so label values stay few whatever the URLs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { routeOf, wasJudged } from '../src/edge/request-state.js'
import { answerKind, answerTimer } from '../src/edge/answer-kind.js'
import { metrics as processMetrics, PROMETHEUS_CONTENT_TYPE, type IceguardMetrics } from '../src/metrics/iceguard-metrics.js'
import type { BoundCounter } from '../src/metrics/hot-series.js'
import { observeUpstreamLatency } from '../src/metrics/upstream-latency.js'
import { ERRORS, GateError } from '../src/errors.js'
import { IcebergErrorResponseSchema } from '../src/schemas/error-model.js'
import { HealthSchema, ReadinessSchema } from '../src/schemas/ops.js'
import { addSharedSchemas } from '../src/schemas/index.js'
import { ref } from '../src/schemas/ref.js'
import type { UpstreamClient } from '../src/upstream/undici/client.js'

interface OpsOptions {
  /** Buffered upstream client, for the readiness probe. */
  readonly client: UpstreamClient
  /** The upstream URL; upstream latency is measured for requests to its origin. */
  readonly upstreamUrl?: string
  readonly metrics?: IceguardMetrics
  /** Longest wait for the upstream's `/v1/config` before answering not ready (ms). Default 5000. */
  readonly readyTimeoutMs?: number
}

const COUNTED = Symbol('iceguard.counted')
type Marked = IncomingMessage & { [COUNTED]?: boolean }

/**
 * The label of a request Fastify's hooks did not see: a streamed Iceberg call by the operation the
 * front door tagged it with, or one of iceguard's own routes registered before these hooks (the
 * API document and its UI, `/docs/*` with its assets) by its pattern — never as an Iceberg call.
 */
function uncountedRoute (req: IncomingMessage): string {
  const route = routeOf(req)
  if (route.kind !== 'local') return `iceberg:${route.kind}`
  const path = (req.url ?? '/').split('?')[0] as string
  if (path === '/docs' || path.startsWith('/docs/')) return '/docs/*'
  if (path === '/openapi.json' || path === '/openapi.yaml') return path
  return 'unmatched'
}

function describeError (err: unknown): string {
  const e = err as { code?: unknown, message?: unknown }
  return typeof e?.code === 'string' ? e.code : typeof e?.message === 'string' ? e.message : String(err)
}

async function ops (app: FastifyInstance, opts: OpsOptions): Promise<void> {
  addSharedSchemas(app)
  const m = opts.metrics ?? processMetrics
  const readyTimeout = opts.readyTimeoutMs ?? 5000

  const stopLatency = opts.upstreamUrl === undefined ? () => {} : observeUpstreamLatency(opts.upstreamUrl, m)
  app.addHook('onClose', async () => { stopLatency() })

  const typed = app.withTypeProvider<TypeBoxTypeProvider>()
  typed.get('/healthz', {
    schema: {
      operationId: 'healthz',
      tags: ['operations'],
      summary: 'Liveness: the process serves HTTP (the upstream is not called)',
      response: { 200: ref(HealthSchema) }
    }
  }, async () => ({ status: 'ok' as const }))

  typed.get('/readyz', {
    schema: {
      operationId: 'readyz',
      tags: ['operations'],
      summary: 'Readiness: the upstream catalog answers GET /v1/config',
      description: 'Ready when the upstream answers `/v1/config` with 2xx, or with 401/403 (it is up and wants credentials). ' +
        'Not ready (503) when it cannot be reached, does not answer in time, or answers 404/5xx.',
      response: {
        200: ref(ReadinessSchema),
        503: ref(IcebergErrorResponseSchema, { description: 'The upstream catalog is not answering.' })
      }
    }
  }, async (request, reply) => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })), readyTimeout)
    })
    let detail: string
    try {
      const res = await Promise.race([opts.client.request({ method: 'GET', path: '/v1/config', headers: { accept: 'application/json' } }), timeout])
      const s = res.statusCode
      if ((s >= 200 && s < 300) || s === 401 || s === 403) return { status: 'ready' as const, upstream: `answered ${s}` }
      detail = `answered ${s}`
    } catch (err) {
      detail = describeError(err)
    } finally {
      clearTimeout(timer)
    }
    request.log.warn({ upstream: detail }, 'not ready')
    return reply.code(503).header('retry-after', '5').send(new GateError(ERRORS.UPSTREAM_UNAVAILABLE,
      `Not ready: the upstream catalog did not answer GET /v1/config (${detail})`).toResponse())
  })

  app.get('/metrics', {
    schema: {
      operationId: 'metrics',
      tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format 0.0.4)',
      description: 'iceguard\'s own families (`iceguard_*`: requests, answer and upstream latency, decisions, findings, ' +
        'base loads, judgement time, decision store, caches, policy) and prom-client\'s default process and Node.js ' +
        'metrics (`process_*`, `nodejs_*`). Listed in docs/deployment.md.',
      response: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } }
    }
  }, async (_request, reply) => {
    return reply.type(PROMETHEUS_CONTENT_TYPE).send(await m.registry.metrics())
  })
}

/**
 * Counts every request in `iceguard_http_requests_total`. Registered before any route (the API
 * document and its UI included), so Fastify's hooks see each request Fastify serves, whether it
 * came through node:http or the fast lane's in-process `inject`; requests the front door streams
 * past Fastify are counted from the server by the Iceberg operation they are.
 */
async function requestMetrics (app: FastifyInstance, opts: { readonly metrics?: IceguardMetrics }): Promise<void> {
  const m = opts.metrics ?? processMetrics
  // One bound series per route, method and status seen (a bounded set: route patterns and
  // operation kinds, HTTP methods, status codes), so counting a request builds no label key.
  const series = new Map<string, BoundCounter>()
  const answered = answerTimer(m)
  const count = (route: string, method: string, status: number): void => {
    const key = `${status} ${method} ${route}`
    let bound = series.get(key)
    if (bound === undefined) {
      bound = m.requests.labels({ route, method, status: String(status) })
      series.set(key, bound)
    }
    bound.inc()
  }
  app.addHook('onRequest', async (request) => { (request.raw as Marked)[COUNTED] = true })
  app.addHook('onResponse', async (request, reply) => {
    count(ownRoute(request.routeOptions.url), request.method, reply.statusCode)
    answered(answerKind(routeOf(request.raw).kind, request.method, wasJudged(request.raw)), reply.statusCode, reply.elapsedTime / 1000)
  })
  const onServerRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const at = performance.now()
    res.once('finish', () => {
      if ((req as Marked)[COUNTED] === true) return
      const method = req.method ?? 'UNKNOWN'
      count(uncountedRoute(req), method, res.statusCode)
      answered(answerKind(routeOf(req).kind, method, false), res.statusCode, (performance.now() - at) / 1000)
    })
  }
  app.server.on('request', onServerRequest)
  app.addHook('onClose', async () => { app.server.off('request', onServerRequest) })
}

/** The API document's UI serves many asset routes: one label for all of them. */
function ownRoute (pattern: string | undefined): string {
  if (pattern === undefined) return 'unmatched'
  return pattern === '/docs' || pattern.startsWith('/docs/') ? '/docs/*' : pattern
}

export const requestMetricsPlugin = fp(requestMetrics, { name: 'iceguard-request-metrics', fastify: '5.x' })

export default fp(ops, { name: 'iceguard-ops', fastify: '5.x' })
