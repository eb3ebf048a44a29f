/**
 * Builds the iceguard Fastify application from a Config.
 *
 * Fastify is created with `serverFactory`. New connections meet the fast lane first
 * (src/edge/fast-lane/, unless `--fast-lane off`), which serves the Iceberg REST calls itself over
 * raw sockets and hands connections that ask for anything else to the node:http server; there the
 * front door (src/edge/front-door.ts) sees each raw request and Fastify handles the rest.
 */
import http from 'node:http'
import type tls from 'node:tls'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { AjvCompiler } from '@fastify/ajv-compiler'
import { during } from '../activity.js'
import { secretFromEnv, type Config } from './config.js'
import { answerClientError } from '../edge/client-error.js'
import { canonicalUrl } from '../edge/request-state.js'
import { createFrontDoor } from '../edge/front-door.js'
import { FastLane } from '../edge/fast-lane/index.js'
import errorHandler, { sendGateError } from '../plugins/error-handler.js'
import { ERRORS, GateError } from '../errors.js'
import swaggerPlugin from '../plugins/swagger.js'
import upstreamPlugin from '../plugins/upstream.js'
import gatePlugin from '../plugins/gate.js'
import { PolicyStore } from '../policy/policy-store.js'
import { fanOutAuditSink, pinoAuditSink } from '../audit/audit-log.js'
import { metricsAuditSink } from '../metrics/gate-metrics.js'
import { metrics as processMetrics } from '../metrics/iceguard-metrics.js'
import { openDecisions, withRevocation, type Decisions } from '../decisions/index.js'
import { policyWebhooks } from '../decisions/policy-webhooks.js'
import { startViewIndex, type ViewIndex } from '../decisions/view-index-service.js'
import { configureTableHistory } from '../iceberg/history-store.js'
import { createUpstream, type Upstream } from '../upstream/index.js'
import routes, { type RoutesOptions } from '../../routes/index.js'
import { requestMetricsPlugin } from '../../routes/ops.js'

/** The name the global webhook's secret goes by in the outbox (the value stays in the configuration). */
const GLOBAL_WEBHOOK_SECRET = 'ICEGUARD_WEBHOOK_SECRET'
/** Kept free at the end of the shutdown budget, so the last log lines are written before the process exits anyway. */
const SHUTDOWN_MARGIN_MS = 500

export interface AppOptions {
  /** An upstream connection to use instead of one built from the config (tests). */
  readonly upstream?: Upstream
  /** Overrides the pino logger options derived from the config. */
  readonly logger?: FastifyServerOptions['logger']
  /** The policy in force (tests); default: a store over `config.policyPath`. */
  readonly policyStore?: PolicyStore
  /** The console's sources of decisions and overrides in force (`routes/index.ts` has the defaults). */
  readonly console?: RoutesOptions
  /** TLS settings for an `https` upstream on top of Node's defaults (tests: their own CA). */
  readonly upstreamTls?: tls.ConnectionOptions
}

declare module 'fastify' {
  interface FastifyInstance {
    policyStore: PolicyStore
    /** The decision log, its store and the override revocations. */
    decisions: Decisions
    /** Which views read which columns (docs/view-index.md). */
    viewIndex: ViewIndex
  }
}

/** Secrets that must never reach a log line. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-iceguard-admin-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie'
]

export function loggerOptions (config: Pick<Config, 'logLevel'>): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' }
  }
}

/**
 * Fastify's own validator compiler (Ajv with its defaults and ajv-formats), one pool per process
 * rather than one per app: an app built again in the same process (a test starting many iceguards)
 * reuses the Ajv that already holds the shared schemas instead of building and checking it anew
 * (the test suite: 434 → 351 CPU-seconds with the admin compiler's cache, docs/performance.md).
 * Passed in, it counts as a custom compiler for Fastify, which then leaves `headers` schemas'
 * names as written; no route here validates headers. The admin scope has its own compiler
 * (routes/admin/validator.ts).
 */
const validators = AjvCompiler()

export async function buildApp (config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  // Assigned once below; the upstream's and the lane's error callbacks, made first, log through it.
  // eslint-disable-next-line prefer-const
  let app: FastifyInstance | undefined
  let closing = false
  let historyEvictions = 0
  const history = configureTableHistory({
    maxBytes: config.gateHistoryMemory,
    onOutcome: outcome => {
      if (outcome === 'evicted') historyEvictions++
      processMetrics.tableHistory.inc({ outcome })
    }
  })
  // The fast lane needs the upstream as configured (an injected upstream is the tests' own).
  const origin = config.upstreamOrigin
  const fastLaneOff = !config.fastLane
    ? '--fast-lane off'
    : options.upstream !== undefined
      ? 'an upstream connection was injected'
      : origin === undefined ? 'no upstream' : undefined
  const fastLane = fastLaneOff !== undefined || origin === undefined
    ? undefined
    : new FastLane({
      origin,
      tls: options.upstreamTls,
      basePath: config.upstreamBasePath,
      connections: config.upstreamConnections,
      connectTimeout: config.upstreamConnectTimeout,
      headersTimeout: config.upstreamHeadersTimeout,
      bodyTimeout: config.upstreamBodyTimeout,
      upstreamKeepAliveTimeout: config.upstreamKeepAliveTimeout,
      keepAliveTimeout: config.keepAliveTimeout,
      bodyLimit: config.bodyLimit,
      retryAfter: config.retryAfter,
      maxResponseBytes: config.upstreamMaxResponse,
      publicUrl: config.publicUrl,
      adminToken: config.adminToken,
      closing: () => closing,
      onError (err, method, url) {
        app?.log.error({ code: (err as { code?: string }).code, method, url }, err.message)
      }
    })
  // With the lane, buffered exchanges (`/v1/config`, the gate's) use its client on either transport;
  // undici streams only what node:http forwards on connections handed over to it, with sockets
  // counted against the lane pool's budget: one --upstream-connections for both.
  const upstream = options.upstream ?? createUpstream(config, {
    tls: options.upstreamTls,
    ...(fastLane !== undefined && { client: fastLane.client, budget: fastLane }),
    onError (err, req) {
      // Only failures are logged on the fast path; never bodies, never headers.
      app?.log.error({ code: (err as { code?: string }).code, method: req.method, url: req.url }, err.message)
    }
  })
  app = Fastify({
    logger: options.logger ?? loggerOptions(config),
    schemaController: { compilersFactory: { buildValidator: validators } },
    bodyLimit: config.bodyLimit,
    // Oversized headers and broken framing: an ErrorModel, and no log line holding the raw request.
    clientErrorHandler: answerClientError,
    // Targets the router cannot decode (`/%zz`) or over-long parameters: answered as ErrorModels too.
    frameworkErrors: (err, _request, reply) => {
      void sendGateError(reply, new GateError(ERRORS.BAD_REQUEST, `Malformed request target: ${err.message}`))
    },
    // Routes see the canonical target the triage chose (src/edge/classify.ts); the front door has
    // set it already on a listening server, and this keeps `app.inject` the same.
    rewriteUrl: (req) => canonicalUrl(req),
    // The gate reads commit bodies itself; Fastify's default of 1 MiB would be the wrong limit.
    serverFactory: (handler) => {
      const server = http.createServer({ keepAliveTimeout: config.keepAliveTimeout }, createFrontDoor({
        forwarder: upstream.forwarder,
        bodyLimit: config.bodyLimit,
        app: handler,
        closing: () => closing,
        retryAfter: config.retryAfter
      }))
      // Behind a load balancer idle connections are long-lived; never cap requests per socket.
      server.maxRequestsPerSocket = 0
      fastLane?.attach(server)
      return server
    }
  })
  // Requests that arrive on open connections once closing has begun get a retryable 503 ErrorModel.
  // A connection busy when closing began turns idle once its answer is sent, and Node would keep it
  // (and so the close) open for the whole keep-alive timeout: idle connections are closed as they appear.
  let drain: NodeJS.Timeout | undefined
  // The shutdown budget starts when closing does: buffered decisions are written within it.
  let closeBy: number | undefined
  app.addHook('preClose', async () => {
    closing = true
    closeBy = Date.now() + config.shutdownTimeout - SHUTDOWN_MARGIN_MS
    drain = setInterval(() => app?.server.closeIdleConnections(), 100).unref()
  })
  app.addHook('onClose', async () => {
    clearInterval(drain)
    fastLane?.close()
  })
  if (fastLaneOff !== undefined && origin !== undefined) app.log.info({ reason: fastLaneOff }, 'fast lane off: every request goes through node:http and the front door')
  await app.register(upstreamPlugin, { config, upstream })
  await app.register(errorHandler, { bodyLimit: config.bodyLimit })
  // One policy store for the gate and the admin API, so an admin reload is what the gate enforces.
  app.decorate('policyStore', options.policyStore ?? new PolicyStore(config.policyPath))
  // A policy file is reloaded when it changes; a bad edit keeps the last good policy (issue: policy as code).
  const stopWatching = during('policy file watch', () => app.policyStore.watch((event) => {
    if (event.type === 'reloaded') app.log.info({ policy: event.source }, 'policy reloaded')
    else if (event.type === 'watch-failed') app.log.warn({ policy: event.source, err: event.error }, 'Cannot watch the policy file: watching again shortly (SIGHUP and the admin API reload it meanwhile)')
    else app.log.error({ policy: event.source, issues: event.issues }, event.error)
  }))
  app.addHook('onClose', async () => { stopWatching() })
  const policyStore = app.policyStore
  const decisions = await openDecisions(config, {
    log: app.log.child({ component: 'decisions' }),
    metrics: processMetrics,
    webhooks: {
      routing: {
        ...(config.webhookUrl !== undefined ? { global: { url: config.webhookUrl, secretEnv: GLOBAL_WEBHOOK_SECRET } } : {}),
        forTable: policyWebhooks(() => policyStore.policy),
        ...(config.publicUrl !== undefined ? { source: config.publicUrl } : {})
      },
      secretFor: (ref) => ref === GLOBAL_WEBHOOK_SECRET ? config.webhookSecret : secretFromEnv(ref)
    }
  })
  app.decorate('decisions', decisions)
  app.addHook('onClose', async () => { await decisions.close(closeBy ?? Date.now() + config.shutdownTimeout - SHUTDOWN_MARGIN_MS) })
  // Registered after the decisions' hook, so closed before them (Fastify runs onClose in reverse).
  const views = await startViewIndex(config, decisions.store, upstream.client, app.log.child({ component: 'view-index' }))
  app.decorate('viewIndex', views.index)
  app.addHook('onClose', async () => { await views.stop() })
  await app.register(gatePlugin, {
    config,
    policy: app.policyStore,
    // Each record is queued for the decision log first, so its audit line says where it was kept
    // (or why it was not); decisions and findings are counted for /metrics from the same records.
    audit: decisions.log.auditSink(fanOutAuditSink(pinoAuditSink(app.log), metricsAuditSink())),
    // A revoked token is refused wherever a token is accepted; an accepted one becomes a record.
    views: views.index,
    overrideCheck: (verify) => withRevocation(verify, decisions.revocations, (grant) => decisions.log.noteOverride({
      id: grant.id, table: grant.table, rules: grant.rules, expiresAt: Date.parse(grant.expiresAt), source: 'seen'
    }))
  })
  // What /metrics reads at each scrape: the decision log's backlog, the caches, the policy in force.
  const sources = processMetrics.sources
  const gate = app.gate
  sources.decisionLog = () => decisions.log.stats()
  sources.caches = () => [...gate.caches(), { cache: 'schema-history', entries: history.tables, bytes: history.bytes, evictions: historyEvictions }]
  sources.policy = () => policyStore
  // Schema commits that reach the fast lane are judged there, by the same gate over the same client.
  fastLane?.useGate(app.gate, (err) => app?.log.error({ err }, 'gate failed'))
  // iceguard's own routes answered in process: the lane keeps their connections (fast-lane/index.ts).
  fastLane?.useLocal(async (req) => {
    const res = await (app as FastifyInstance).inject({ method: req.method as 'GET', url: req.url, headers: req.headers, payload: req.body, remoteAddress: req.remoteAddress })
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = typeof value === 'number' ? String(value) : value
    return { statusCode: res.statusCode, headers, body: res.rawPayload }
  })
  // Before the routes: the document is collected from routes as they are added.
  // Counted from the first route on, the API document's included.
  await app.register(requestMetricsPlugin)
  await app.register(swaggerPlugin)
  await app.register(routes, options.console ?? {})
  return app
}
