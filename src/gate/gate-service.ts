/**
 * The gate assembled over the real upstream: builds `gateCommit`'s dependencies for one request
 * from the buffered upstream client, the policy and the audit sink. Fastify-free; the route only
 * hands in what it read from the request.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { AuditSink } from '../audit/audit-log.js'
import type { RuleSettings } from '../engine/rules/rule.js'
import type { UpstreamClient } from '../upstream/undici/client.js'
import type { UpstreamAnswer } from './gate-types.js'
import { baseLoadHeaders, gateCommit, type BaseLoad, type GateConfig, type GateIdent, type GatedKind, type GateOutcome, type RegistrationCheck } from './commit-gate.js'
import type { ViewIndexPort } from './gate-types.js'
import type { TableRef } from '../iceberg/rest-path.js'
import { countBaseLoads } from '../metrics/gate-metrics.js'
import { metrics as processMetrics, type CacheReading, type IceguardMetrics } from '../metrics/iceguard-metrics.js'
import type { AuditRecord } from '../audit/audit-log.js'
import { callerContext, inClientSpan, inSpan, startServerSpan, tracingOn, withSpan, SpanStatusCode } from '../telemetry/tracing.js'
import { createBaseCache, type BaseCache } from './base-cache.js'
import { cachedBase, upstreamTableLoader } from './load-base.js'
import { createSchemaTexts, type SchemaTexts } from '../gate/schema-texts.js'
import { OVERRIDE_HEADER, overrideVerifier, type OverrideVerifier } from './override.js'

interface GateServiceOptions {
  readonly client: UpstreamClient
  /** Effective rule settings of a table (the policy store's `resolve`). */
  readonly settingsFor: (table: TableRef) => RuleSettings
  readonly audit: AuditSink
  readonly config: GateConfig
  /** HMAC secret of break-glass tokens; without it the override header is refused. */
  readonly overrideSecret?: string
  /** Wraps the token check, e.g. to refuse revoked tokens (src/decisions/revocations.ts). */
  readonly overrideCheck?: (verify: OverrideVerifier) => OverrideVerifier
  readonly registration?: RegistrationCheck
  /** The view index: dependents of a table, and the view writes that pass. */
  readonly views?: ViewIndexPort
  readonly onError?: (err: unknown) => void
  /** Parsed base metadata kept by ETag; default a cache of default size, `null` for none. */
  readonly baseCache?: BaseCache | null
  /** Schemas of each table's latest base by their text; default a cache of default size, `null` for none. */
  readonly schemaTexts?: SchemaTexts | null
  readonly metrics?: IceguardMetrics
}

export interface GateRequest {
  readonly kind: GatedKind
  readonly ident: GateIdent
  readonly method: string
  /** The canonical target (src/edge/classify.ts): the commit is forwarded on it, where it was judged. */
  readonly path: string
  readonly rawBody: Buffer
  /** The caller already ran `needsGate` on this very body, and it said yes. */
  readonly scanned?: boolean
  readonly headers: IncomingHttpHeaders
  /** Headers for the forwarded commit as a flat list (hop-by-hop already dropped). */
  readonly forwardHeaders: readonly string[]
  readonly requestId: string
  /** The verified caller (an admin write); absent: read from `Authorization`, unverified. */
  readonly principal?: string
}

export interface GateService {
  handle (request: GateRequest): Promise<GateOutcome>
  /**
   * The same gate (policy, caches, audit, override secret) over another transport to the same
   * upstream: the fast lane judges the commits it reads over its own pooled sockets.
   */
  over (client: UpstreamClient): GateService
  /**
   * A table's current metadata as the gate would judge against it, with the caller's headers:
   * the same conditional load through the same ETag cache, so an admin read (diff, dry run,
   * schema-changes) and the commit that follows it parse the metadata once. Not counted as a
   * gate base load.
   */
  readBase (table: TableRef, headers: IncomingHttpHeaders): Promise<BaseLoad>
  /** Sizes of the caches this gate keeps (shared by every transport), for /metrics. */
  caches (): CacheReading[]
}

export function createGateService (opts: GateServiceOptions): GateService {
  const verifier = overrideVerifier(opts.overrideSecret)
  const verify: OverrideVerifier | undefined = verifier === undefined ? undefined : (opts.overrideCheck ?? (v => v))(verifier)
  // Counted for /metrics (iceguard_base_loads_total by outcome). Parsed bases are kept by ETag and
  // revalidated on every commit (base-cache.ts); on a miss, unchanged schemas are not parsed again
  // (schema-texts.ts).
  const cache = opts.baseCache === null ? undefined : opts.baseCache ?? createBaseCache()
  const texts = opts.schemaTexts === null ? undefined : opts.schemaTexts ?? createSchemaTexts()
  const peekBase = cache === undefined ? undefined : (table: TableRef, headers: IncomingHttpHeaders) => cachedBase(cache, table, headers)
  const m = opts.metrics ?? processMetrics
  const caches = (): CacheReading[] => [
    ...(cache === undefined ? [] : [{ cache: 'base' as const, entries: cache.size, bytes: cache.bytes, evictions: cache.evictions }]),
    ...(texts === undefined ? [] : [{ cache: 'schema-texts' as const, entries: texts.size, bytes: texts.chars, evictions: texts.evictions }])
  ]
  const over = (client: UpstreamClient): GateService => {
    const load = upstreamTableLoader((path, headers) => client.request({ method: 'GET', path, headers }), cache, texts)
    const loadTable = countBaseLoads(load)
    return {
      readBase: async (table, headers) => await load(table, baseLoadHeaders(headers)),
      async handle (request) {
        // The override token is for the gate alone: it never travels to the upstream.
        const headers = withoutHeader(request.forwardHeaders, OVERRIDE_HEADER)
        const send = async (body: Buffer, trace?: Readonly<Record<string, string>>): Promise<UpstreamAnswer> =>
          await client.request({ method: request.method, path: request.path, headers: trace === undefined ? headers : withTrace(headers, trace), body, commit: true })
        // The judgement's CPU time, summed over its steps, observed once per write that was judged.
        let judging = 0
        const deps: Parameters<typeof gateCommit>[1] = {
          loadTable,
          peekBase,
          forward: (body) => send(body),
          settingsFor: opts.settingsFor,
          audit: opts.audit,
          config: opts.config,
          verifyOverride: verify,
          registration: opts.registration,
          ...(opts.views !== undefined && { views: opts.views }),
          get: async (path, headers) => await client.request({ method: 'GET', path, headers }),
          onError: opts.onError,
          phase (name, work) {
            if (name !== 'judge') return work()
            const started = performance.now()
            try {
              return work()
            } finally {
              judging += performance.now() - started
            }
          }
        }
        const input = {
          kind: request.kind,
          ident: request.ident,
          rawBody: request.rawBody,
          ...(request.scanned === true && { scanned: true }),
          headers: request.headers,
          requestId: request.requestId,
          ...(request.principal !== undefined && { principal: request.principal })
        }
        const outcome = tracingOn() ? await traced(request, input, deps, send) : await gateCommit(input, deps)
        if (judging > 0) m.judgement.observe(judging / 1000)
        return outcome
      },
      over,
      caches
    }
  }
  return over(opts.client)
}

type GateDeps = Parameters<typeof gateCommit>[1]

/** The table a write names, for span attributes (never a label of a metric). */
function tableOf (request: GateRequest): string {
  const { namespace, table } = request.ident
  return table === undefined ? namespace.join('.') : [...namespace, table].join('.')
}

/**
 * `gateCommit` in spans (src/telemetry/tracing.ts): a server span continuing the caller's
 * `traceparent`, a child for each step, and the context of the base-load and forward spans sent
 * on to the catalog in place of the caller's.
 */
async function traced (request: GateRequest, input: Parameters<typeof gateCommit>[0], deps: GateDeps,
  send: (body: Buffer, trace: Readonly<Record<string, string>>) => Promise<UpstreamAnswer>): Promise<GateOutcome> {
  const parent = callerContext(request.headers)
  const table = tableOf(request)
  const span = startServerSpan('iceguard.gate', parent, {
    'iceguard.kind': request.kind,
    'iceberg.table': table,
    'http.request.method': request.method
  })
  const phase = deps.phase
  const tracedDeps: GateDeps = {
    ...deps,
    phase: (name, work) => inSpan(`iceguard.${name}`, { 'iceberg.table': table }, () => phase === undefined ? work() : phase(name, work)),
    loadTable: async (ref, headers) => await inClientSpan('iceguard.base_load', { 'iceberg.table': [...ref.namespace, ref.name].join('.'), 'http.request.method': 'GET' }, async (carrier, child) => {
      const load = await deps.loadTable(ref, { ...headers, ...carrier })
      child.setAttribute('http.response.status_code', load.status)
      return load
    }),
    forward: async (body) => await inClientSpan('iceguard.forward', { 'iceberg.table': table, 'http.request.method': request.method }, async (carrier, child) => {
      const answer = await send(body, carrier)
      child.setAttribute('http.response.status_code', answer.statusCode)
      return answer
    }),
    audit: {
      record: (entry: AuditRecord) => {
        span.setAttribute('iceguard.verdict', entry.verdict)
        span.setAttribute('http.response.status_code', entry.status)
        inSpan('iceguard.decision.record', { 'iceberg.table': table, 'iceguard.verdict': entry.verdict }, () => deps.audit.record(entry))
      }
    }
  }
  try {
    const outcome = await withSpan(span, parent, async () => await gateCommit(input, tracedDeps))
    if (outcome.type === 'answer' && outcome.answer.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
    return outcome
  } finally {
    span.end()
  }
}

/** The forwarded headers with the caller's trace context replaced by `trace` (this hop's span). */
function withTrace (flat: readonly string[], trace: Readonly<Record<string, string>>): string[] {
  const out: string[] = []
  for (let i = 0; i < flat.length; i += 2) {
    const name = (flat[i] as string).toLowerCase()
    if (name !== 'traceparent' && name !== 'tracestate') out.push(flat[i] as string, flat[i + 1] as string)
  }
  for (const [name, value] of Object.entries(trace)) out.push(name, value)
  return out
}

function withoutHeader (flat: readonly string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i < flat.length; i += 2) {
    if ((flat[i] as string).toLowerCase() !== name) out.push(flat[i] as string, flat[i + 1] as string)
  }
  return out
}
