/**
 * What the admin routes need from the rest of the server, and the helpers they share: reading a
 * table from the upstream with the caller's own credentials, and naming tables from paths.
 */
import type { IncomingHttpHeaders } from 'node:http'
import type { AdminAuth } from '../../src/auth/admin-auth.js'
import { ERRORS, errorBody, GateError, type ErrorDef } from '../../src/errors.js'
import { baseLoadHeaders, type BaseLoad } from '../../src/gate/commit-gate.js'
import { upstreamTableLoader } from '../../src/gate/load-base.js'
import { parseUpstreamBody } from '../../src/json/parse-commit-body.js'
import type { OverrideVerifier } from '../../src/gate/override.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import type { DependentView } from '../../src/iceberg/view-reads.js'
import type { ViewIndexStatus } from '../../src/decisions/view-index.js'
import type { Decisions } from '../../src/decisions/index.js'
import type { IceguardMetrics } from '../../src/metrics/iceguard-metrics.js'
import type { Policy } from '../../src/policy/policy.js'
import type { ReloadResult } from '../../src/policy/policy-store.js'
import type { EffectivePolicy } from '../../src/policy/resolve-policy.js'
import type { UpstreamClient } from '../../src/upstream/undici/client.js'
import { isObject } from '../../src/iceberg/json-values.js'
import { NAMESPACE_SEPARATOR, namespaceLevels, tableName, type TableRef } from '../../src/iceberg/rest-path.js'

/** The policy as the admin API sees it: the policy store's reading and reloading surface. */
export interface AdminPolicy {
  readonly policy: Policy
  resolve (ident: TableRef): EffectivePolicy
  reload (): ReloadResult
}

/** Loads a table's metadata with the caller's headers as they came (the loader drops what must not travel). */
export type BaseLoader = (table: TableRef, headers: IncomingHttpHeaders) => Promise<BaseLoad>

export interface AdminRoutesOptions {
  /** Buffered upstream client (table reads, when `readBase` is not given). */
  readonly client: UpstreamClient
  /**
   * Table reads through the gate's ETag cache (`GateService.readBase`): the commit that follows a
   * read then revalidates with a 304 instead of loading and parsing the metadata again.
   */
  readonly readBase?: BaseLoader
  readonly policy: AdminPolicy
  /** Admin authentication (static token, JWTs); absent: reads open, state-changing calls refused. */
  readonly auth?: AdminAuth
  readonly metrics?: IceguardMetrics
  /** `ICEGUARD_OVERRIDE_SECRET`: dry runs honour the override header as the gate does. */
  readonly overrideSecret?: string
  /** The decision log and override records; without it those routes are not served. */
  readonly decisions?: Decisions
  /** The view index (docs/view-index.md); without it the dependents and index routes are not served. */
  readonly views?: ViewIndexReader
}

/** What the admin API reads of the view index. */
export interface ViewIndexReader {
  dependentsOf (table: TableRef): readonly DependentView[]
  status (): ViewIndexStatus
}

/** Thrown to send an upstream's own answer back as it came (404, 401, 403 on a table read). */
export class RelayedAnswer extends Error {
  constructor (readonly statusCode: number, readonly headers: Readonly<Record<string, string | string[] | undefined>>, readonly body: Buffer) {
    super(`upstream answered ${statusCode}`)
    this.name = 'RelayedAnswer'
  }
}

/**
 * A namespace from an admin path segment: levels joined by the unit separator (`%1F`, as in the
 * Iceberg REST spec) or, for people typing URLs, by dots when no separator is present.
 */
export function namespaceFromPath (segment: string): string[] {
  const levels = segment.includes(NAMESPACE_SEPARATOR) ? namespaceLevels(segment) : segment.split('.')
  if (levels.some(l => l === '')) throw new GateError(ERRORS.BAD_REQUEST, `Invalid namespace "${segment}": levels must not be empty`)
  return levels
}

/**
 * Loads one table's metadata as the caller: their Authorization travels, nothing else is added.
 * `readBase` (the gate's cached reader) takes the caller's headers as they came; without it the
 * client is used directly, uncached.
 */
export function createTableReader (client: UpstreamClient, readBase?: BaseLoader) {
  const read = readBase ?? uncachedReader(client)
  return {
    /** The raw load, for callers that treat 404 specially (validate with assert-create). */
    async load (table: TableRef, headers: IncomingHttpHeaders): Promise<BaseLoad> {
      return await read(table, headers)
    },
    /** The metadata, or the upstream's refusal relayed (404, 401, 403…), or a 502 when unreadable. */
    async metadata (table: TableRef, headers: IncomingHttpHeaders): Promise<TableMetadata> {
      return metadataOrThrow(table, await read(table, headers))
    }
  }
}

export type TableReader = ReturnType<typeof createTableReader>

/** What every admin route file is registered with: the options and the shared table reader. */
export interface AdminScope {
  readonly options: AdminRoutesOptions
  readonly tables: TableReader
  /** Break-glass tokens, verified exactly as the gate verifies them; absent without a secret. */
  readonly verifyOverride?: OverrideVerifier
}

function uncachedReader (client: UpstreamClient): BaseLoader {
  const load = upstreamTableLoader((path, headers) => client.request({ method: 'GET', path, headers }))
  return async (table, headers) => await load(table, baseLoadHeaders(headers))
}

export function metadataOrThrow (table: TableRef, loaded: BaseLoad): TableMetadata {
  if (loaded.status === 200 && loaded.metadata !== undefined) return loaded.metadata
  if (loaded.status === 200) {
    throw new GateError(ERRORS.UPSTREAM_BAD_RESPONSE, `Cannot read table ${tableName(table)}: the upstream's metadata is unreadable (${loaded.problem ?? 'unknown problem'})`)
  }
  if (loaded.status >= 500) {
    throw new GateError(ERRORS.UPSTREAM_BAD_RESPONSE, `Cannot read table ${tableName(table)}: the upstream catalog answered ${loaded.status}`)
  }
  const body = loaded.rawStatusBody ?? Buffer.alloc(0)
  // Relay the upstream's Iceberg error as it came; wrap anything that is not one.
  const parsed = parseUpstreamBody(body)
  if (parsed.ok && isObject(parsed.value) && isObject(parsed.value.error)) {
    throw new RelayedAnswer(loaded.status, loaded.headers ?? {}, body)
  }
  const message = loaded.status === 404 ? `Table does not exist: ${tableName(table)}` : `Cannot read table ${tableName(table)}: the upstream catalog answered ${loaded.status}`
  const known = RELAYED_STATUS.get(loaded.status)
  if (known !== undefined) throw new GateError(known, message, { headers: stringHeaders(pick(loaded.headers, 'www-authenticate')) })
  // Another refusal without an Iceberg body: the upstream's status stays (the client's next step
  // depends on it), in an Iceberg body of the catalogue's generic type.
  const json = JSON.stringify(errorBody(loaded.status, ERRORS.BAD_REQUEST.type, message))
  throw new RelayedAnswer(loaded.status, { 'content-type': 'application/json', ...pick(loaded.headers, 'www-authenticate') }, Buffer.from(json))
}

/** Upstream refusals of a table read that the catalogue names: the same status, the catalogue's type. */
const RELAYED_STATUS: ReadonlyMap<number, ErrorDef> = new Map([
  [401, ERRORS.NOT_AUTHORIZED], [403, ERRORS.FORBIDDEN], [404, ERRORS.NO_SUCH_TABLE]
])

function stringHeaders (headers: Record<string, string | string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]))
}

function pick (headers: BaseLoad['headers'], name: string): Record<string, string | string[]> {
  const v = headers?.[name]
  return v === undefined ? {} : { [name]: v }
}
