/**
 * The view index's crawl (docs/view-index.md): list the catalog's namespaces (nested ones too), the
 * views of each, load each view and read its current version, loading the schemas of the tables it
 * names. Sent with the catalog credential of the configuration (`--catalog-token`, or OAuth2 client
 * credentials exchanged at the catalog's token endpoint, REST spec `POST /v1/oauth/tokens`);
 * without one, with none, and what could not be read is reported, not guessed.
 *
 * Only identifiers and what views read are kept. A view's SQL is read here and nowhere stored,
 * logged or sent; an error names the path and the status, never a body or a credential.
 */
import { parseSchema } from '../iceberg/parse.js'
import { isObject } from '../iceberg/json-values.js'
import type { Schema, WireObject } from '../iceberg/types.js'
import { readView } from '../lineage/read-view.js'
import type { CrawlStatus, StoredView } from './view-index-store.js'

export interface CrawlAnswer {
  readonly statusCode: number
  readonly body: Buffer
}

/** One call to the catalog, on a path relative to its base URL. Throws when it cannot be reached. */
export type CatalogCall = (method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: Buffer) => Promise<CrawlAnswer>

export interface CatalogCredential {
  readonly token?: string
  readonly client?: { readonly clientId: string, readonly secret: string }
}

export interface CrawlResult {
  readonly prefix: string
  readonly views: StoredView[]
  readonly status: CrawlStatus
  readonly startedAt: number
}

/** Listing pages followed at most, per listing: a catalog that pages forever cannot hold the crawl. */
const MAX_PAGES = 1000

export async function crawlViews (call: CatalogCall, credential: CatalogCredential, now: () => number = Date.now): Promise<CrawlResult> {
  const startedAt = now()
  const errors: string[] = []
  const headers: Record<string, string> = { accept: 'application/json' }
  const token = await bearer(call, credential, errors)
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  else if (credential.token === undefined && credential.client === undefined) {
    errors.push('no catalog credential configured (--catalog-token or --catalog-credential): only what the catalog shows without one is indexed')
  }

  /** `quiet`: a 404 is an answer, not a crawl error (a table a view names may live in another catalog). */
  const get = async (path: string, quiet = false): Promise<unknown> => {
    let res: CrawlAnswer
    try {
      res = await call('GET', path, headers)
    } catch (err) {
      errors.push(`GET ${path}: ${(err as { code?: string }).code ?? 'unreachable'}`)
      return undefined
    }
    if (res.statusCode !== 200) {
      if (!(quiet && res.statusCode === 404)) errors.push(`GET ${path} answered ${res.statusCode}`)
      return undefined
    }
    try {
      return JSON.parse(res.body.toString('utf8')) as unknown
    } catch {
      errors.push(`GET ${path}: the answer is not JSON`)
      return undefined
    }
  }

  const config = await get('/v1/config')
  const prefix = isObject(config) ? readPrefix(config) : ''
  const base = prefix === '' ? '/v1' : `/v1/${encodeURIComponent(prefix)}`

  const namespaces: string[][] = []
  const walk = async (parent: readonly string[]): Promise<void> => {
    const query = parent.length === 0 ? '' : `parent=${encodeURIComponent(parent.join('\u001f'))}`
    for (const item of await listPaged(get, `${base}/namespaces`, query, 'namespaces')) {
      if (!Array.isArray(item) || !item.every(l => typeof l === 'string')) continue
      // Catalogs that ignore `parent` list every namespace: keep only the children, once.
      if (item.length !== parent.length + 1 || !parent.every((l, i) => l === item[i])) continue
      namespaces.push(item)
      await walk(item)
    }
  }
  await walk([])

  const views: StoredView[] = []
  for (const ns of namespaces) {
    const nsPath = `${base}/namespaces/${encodeURIComponent(ns.join('\u001f'))}`
    for (const ident of await listPaged(get, `${nsPath}/views`, '', 'identifiers')) {
      if (!isObject(ident) || typeof ident.name !== 'string') continue
      const loaded = await get(`${nsPath}/views/${encodeURIComponent(ident.name)}`)
      const version = isObject(loaded) ? currentVersion(loaded.metadata) : undefined
      if (version === undefined) continue
      const reading = await readView(version, async (table) => await loadSchema(get, base, table))
      views.push({ prefix, namespace: ns, name: ident.name, reads: reading.reads, indexedAt: now() })
    }
  }
  return { prefix, views, status: { indexedAt: startedAt, complete: errors.length === 0, errors }, startedAt }
}

async function bearer (call: CatalogCall, credential: CatalogCredential, errors: string[]): Promise<string | undefined> {
  if (credential.token !== undefined) return credential.token
  if (credential.client === undefined) return undefined
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: credential.client.clientId,
    client_secret: credential.client.secret,
    scope: 'catalog'
  })
  try {
    const res = await call('POST', '/v1/oauth/tokens', { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, Buffer.from(form.toString()))
    if (res.statusCode === 200) {
      const body = JSON.parse(res.body.toString('utf8')) as unknown
      if (isObject(body) && typeof body.access_token === 'string') return body.access_token
    }
    errors.push(`POST /v1/oauth/tokens answered ${res.statusCode}: no token for the catalog credential`)
  } catch (err) {
    errors.push(`POST /v1/oauth/tokens: ${(err as { code?: string }).code ?? 'no token for the catalog credential'}`)
  }
  return undefined
}

/** The catalog's prefix from `/v1/config`: an override wins over a default (REST spec getConfig). */
function readPrefix (config: WireObject): string {
  for (const key of ['overrides', 'defaults']) {
    const map = config[key]
    if (isObject(map) && typeof map.prefix === 'string') return map.prefix
  }
  return ''
}

async function listPaged (get: (path: string) => Promise<unknown>, path: string, query: string, member: string): Promise<unknown[]> {
  const out: unknown[] = []
  let token: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const params = [query, token === undefined ? '' : `pageToken=${encodeURIComponent(token)}`].filter(p => p !== '').join('&')
    const body = await get(params === '' ? path : `${path}?${params}`)
    if (!isObject(body)) break
    const items = body[member]
    if (Array.isArray(items)) out.push(...items)
    const next = body['next-page-token']
    if (typeof next !== 'string' || next === '') break
    token = next
  }
  return out
}

function currentVersion (metadata: unknown): WireObject | undefined {
  if (!isObject(metadata) || !Array.isArray(metadata.versions)) return undefined
  const id = metadata['current-version-id']
  return metadata.versions.find((v): v is WireObject => isObject(v) && v['version-id'] === id)
}

async function loadSchema (get: (path: string, quiet: boolean) => Promise<unknown>, base: string, table: readonly string[]): Promise<Schema | undefined> {
  if (table.length < 2) return undefined
  const ns = table.slice(0, -1)
  const name = table[table.length - 1] as string
  const body = await get(`${base}/namespaces/${encodeURIComponent(ns.join('\u001f'))}/tables/${encodeURIComponent(name)}?snapshots=refs`, true)
  const metadata = isObject(body) ? body.metadata : undefined
  if (!isObject(metadata) || !Array.isArray(metadata.schemas)) return undefined
  const current = metadata.schemas.find(s => isObject(s) && s['schema-id'] === metadata['current-schema-id'])
  return current === undefined ? undefined : parseSchema(current).schema
}
