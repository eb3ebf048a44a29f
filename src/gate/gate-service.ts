/**
 * The gate assembled over the real upstream: builds `gateCommit`'s dependencies for one request
 * from the buffered upstream client, the policy and the audit sink. Fastify-free; the route only
 * hands in what it read from the request.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { AuditSink } from '../audit/audit-log.js'
import type { RuleSettings } from '../engine/rules/rule.js'
import type { UpstreamClient } from '../upstream/undici/client.js'
import { baseLoadHeaders, gateCommit, type BaseLoad, type GateConfig, type GateIdent, type GatedKind, type GateOutcome, type RegistrationCheck } from './commit-gate.js'
import type { ViewIndexPort } from './gate-types.js'
import type { TableRef } from '../iceberg/rest-path.js'
import { countBaseLoads } from '../metrics/gate-metrics.js'
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
  const over = (client: UpstreamClient): GateService => {
    const load = upstreamTableLoader((path, headers) => client.request({ method: 'GET', path, headers }), cache, texts)
    const loadTable = countBaseLoads(load)
    return {
      readBase: async (table, headers) => await load(table, baseLoadHeaders(headers)),
      async handle (request) {
        // The override token is for the gate alone: it never travels to the upstream.
        const headers = withoutHeader(request.forwardHeaders, OVERRIDE_HEADER)
        return await gateCommit({
          kind: request.kind,
          ident: request.ident,
          rawBody: request.rawBody,
          ...(request.scanned === true && { scanned: true }),
          headers: request.headers,
          requestId: request.requestId
        }, {
          loadTable,
          peekBase,
          forward: (body) => client.request({ method: request.method, path: request.path, headers, body, commit: true }),
          settingsFor: opts.settingsFor,
          audit: opts.audit,
          config: opts.config,
          verifyOverride: verify,
          registration: opts.registration,
          ...(opts.views !== undefined && { views: opts.views }),
          get: async (path, headers) => await client.request({ method: 'GET', path, headers }),
          onError: opts.onError
        })
      },
      over
    }
  }
  return over(opts.client)
}

function withoutHeader (flat: readonly string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i < flat.length; i += 2) {
    if ((flat[i] as string).toLowerCase() !== name) out.push(flat[i] as string, flat[i + 1] as string)
  }
  return out
}
