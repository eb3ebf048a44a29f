/**
 * `--url`: a table's current metadata, loaded the way an engine loads it — from iceguard or
 * straight from the catalog, they answer the same. `GET /v1/config` first for the catalog's
 * `prefix` (`overrides` win over `defaults`), then `GET /v1/{prefix}/namespaces/{ns}/tables/{t}`
 * (Iceberg REST spec, loadTable; `snapshots=refs`, as the gate loads a base). Namespace levels
 * are joined with the unit separator 0x1F, which the spec obliges every server to accept.
 */
import { request } from 'undici'
import { parseUpstreamBody } from '../json/parse-commit-body.js'
import type { TableMetadata } from '../iceberg/types.js'
import { UsageError } from './exit-codes.js'
import { metadataFromJson } from './read-input.js'
import { isObject } from '../iceberg/json-values.js'
import { tableName, type TableRef } from '../iceberg/rest-path.js'

interface LiveTableSource {
  /** iceguard's or the catalog's base URL (with its base path, e.g. `http://polaris:8181/api/catalog`). */
  readonly url: string
  /** Bearer token for `Authorization` (`--token`, or `ICEGUARD_TOKEN`). */
  readonly token?: string
  /** `warehouse` for `/v1/config`, for catalogs that pick the prefix by it (Polaris). */
  readonly warehouse?: string
}

interface Answer { readonly status: number, readonly body: Buffer }

async function get (source: LiveTableSource, url: string, what: string): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (source.token !== undefined && source.token !== '') headers.authorization = `Bearer ${source.token}`
  try {
    const res = await request(url, { method: 'GET', headers })
    return { status: res.statusCode, body: Buffer.from(await res.body.arrayBuffer()) }
  } catch (err) {
    throw new UsageError(`Cannot load ${what}: ${source.url} is unreachable (${(err as { code?: string }).code ?? (err as Error).message})`)
  }
}

/** `404 NoSuchTableException: Table does not exist: db.t`, from an ErrorModel when there is one. */
function describeError (a: Answer): string {
  const parsed = parseUpstreamBody(a.body)
  if (parsed.ok && isObject(parsed.value) && isObject(parsed.value.error)) {
    const { type, message } = parsed.value.error
    return `${a.status}${typeof type === 'string' ? ` ${type}` : ''}${typeof message === 'string' ? `: ${message}` : ''}`
  }
  return String(a.status)
}

function jsonObject (a: Answer, what: string): Record<string, unknown> {
  const parsed = parseUpstreamBody(a.body)
  if (!parsed.ok) throw new UsageError(`Cannot load ${what}: ${parsed.message}`)
  if (!isObject(parsed.value)) throw new UsageError(`Cannot load ${what}: the answer is not a JSON object`)
  return parsed.value
}

/** The `prefix` the catalog's `/v1/config` names, if any. */
async function catalogPrefix (source: LiveTableSource, base: string): Promise<string | undefined> {
  const query = source.warehouse === undefined ? '' : `?warehouse=${encodeURIComponent(source.warehouse)}`
  const what = `the catalog configuration (${base}/v1/config${query})`
  const answer = await get(source, `${base}/v1/config${query}`, what)
  if (answer.status !== 200) throw new UsageError(`Cannot load ${what}: ${describeError(answer)}`)
  const config = jsonObject(answer, what)
  for (const part of [config.overrides, config.defaults]) {
    if (isObject(part) && typeof part.prefix === 'string' && part.prefix !== '') return part.prefix.replace(/^\/+|\/+$/g, '')
  }
  return undefined
}

function loadTablePath (table: TableRef, prefix: string | undefined): string {
  const namespace = table.namespace.map(encodeURIComponent).join('%1F')
  return `/v1/${prefix === undefined ? '' : `${prefix}/`}namespaces/${namespace}/tables/${encodeURIComponent(table.name)}?snapshots=refs`
}

/** The table's metadata as the catalog serves it now; any failure is a UsageError naming the table and the answer. */
export async function loadLiveTable (source: LiveTableSource, table: TableRef): Promise<TableMetadata> {
  if (!/^https?:\/\/[^/]/.test(source.url)) throw new UsageError(`Invalid --url "${source.url}": expected the http(s) address of iceguard or of the catalog`)
  const base = source.url.replace(/\/+$/, '')
  const name = tableName(table)
  const prefix = await catalogPrefix(source, base)
  const url = base + loadTablePath(table, prefix)
  const what = `table ${name} from ${url}`
  const answer = await get(source, url, what)
  if (answer.status === 404) throw new UsageError(`Cannot load ${what}: no such table (${describeError(answer)})`)
  if (answer.status !== 200) throw new UsageError(`Cannot load ${what}: ${describeError(answer)}`)
  return metadataFromJson(jsonObject(answer, what), `of ${name} from ${url}`)
}
