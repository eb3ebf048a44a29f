/**
 * Loading the metadata a commit will be judged against: `GET …/tables/{t}?snapshots=refs`
 * (REST spec loadTable), sent with the caller's own credentials so nobody sees more through the
 * gate than the upstream allows them. `snapshots=refs` keeps the answer small; schemas, specs and
 * sort orders are complete either way.
 *
 * The answer's `config` and `storage-credentials` may hold secrets: they are never kept, logged or
 * relayed; only `metadata` is read.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { ERRORS, type ErrorDef } from '../errors.js'
import { markServed } from '../iceberg/history-store.js'
import { parseTableMetadata } from '../iceberg/parse.js'
import { tableName, type TableRef } from '../iceberg/rest-path.js'
import type { TableMetadata } from '../iceberg/types.js'
import { baseCacheKey, type BaseCache } from './base-cache.js'
import type { BaseLoad, UpstreamAnswer } from './gate-types.js'
import { isObject } from '../iceberg/json-values.js'
import { answer } from './gate-answers.js'
import { readBaseText } from '../json/read-base.js'
import type { SchemaTexts } from '../gate/schema-texts.js'

/** Sends one GET to the upstream on a path relative to its base URL. Throws on transport failure. */
type UpstreamGet = (path: string, headers: IncomingHttpHeaders) => Promise<UpstreamAnswer>

/** `/v1/[{prefix}/]namespaces/{ns}/tables/{t}`: levels joined by the unit separator, each encoded. */
export function tablePath (table: TableRef): string {
  const prefix = table.prefix === undefined || table.prefix === '' ? '' : `${encodeURIComponent(table.prefix)}/`
  const ns = table.namespace.map(encodeURIComponent).join('%1F')
  return `/v1/${prefix}namespaces/${ns}/tables/${encodeURIComponent(table.name)}`
}

/**
 * A name part that would be a dot segment in the path (`.`, `..`): encodeURIComponent keeps dots,
 * and an upstream resolving the path would load another resource than the table named.
 */
function dotSegmentPart (table: TableRef): string | undefined {
  for (const part of [table.prefix, ...table.namespace, table.name]) if (part === '.' || part === '..') return part
  return undefined
}

/** The path of the gate's base load: `snapshots=refs` keeps the answer small. */
function baseLoadPath (table: TableRef): string {
  return `${tablePath(table)}?snapshots=refs`
}

/**
 * The metadata this caller's cache holds for `table`: what a 304 to the next load would confirm.
 * Only a hint for work done while that load is in flight (`commit-gate.ts`): a load's answer is
 * the one source of the base a commit is judged against.
 */
export function cachedBase (cache: BaseCache, table: TableRef, headers: IncomingHttpHeaders): TableMetadata | undefined {
  return dotSegmentPart(table) === undefined ? cache.get(baseCacheKey(baseLoadPath(table), headers))?.metadata : undefined
}

/**
 * A `loadTable` dependency for the gate, over any upstream GET. With a `cache`, the load is a
 * conditional GET when this caller already holds this table's parsed metadata, and a 304 reuses it
 * (`base-cache.ts`); the request is sent either way, with the caller's own headers. With `texts`,
 * a 200 parses again only the schemas whose text changed since the table's previous read
 * (`schema-texts.ts`).
 */
export function upstreamTableLoader (get: UpstreamGet, cache?: BaseCache, texts?: SchemaTexts): (table: TableRef, headers: IncomingHttpHeaders) => Promise<BaseLoad> {
  return async (table, headers) => {
    const dots = dotSegmentPart(table)
    if (dots !== undefined) {
      // Nothing is sent: answered like an upstream refusal, which the gate and the admin API relay.
      return refusal(ERRORS.BAD_REQUEST,
        `Cannot load table ${tableName(table)}: "${dots}" is not usable as a namespace or table name (it would be a dot segment in the request path)`)
    }
    const path = baseLoadPath(table)
    // The gate reads this body itself: never let the caller's Accept-Encoding (Java's Apache
    // HttpClient sends `gzip, x-gzip, deflate`) make the upstream compress it.
    const sent: IncomingHttpHeaders = { ...headers, accept: 'application/json', 'accept-encoding': 'identity' }
    // Schema texts are kept per table, for every caller: only texts the answer itself holds are reused.
    const reuse = texts === undefined ? undefined : { texts, key: path }
    if (cache === undefined) {
      const answer = await getOrTooLarge(get, table, path, sent)
      return 'status' in answer ? answer : readLoadAnswer(answer, reuse)
    }
    const key = baseCacheKey(path, headers)
    const cached = cache.get(key)
    if (cached !== undefined) sent['if-none-match'] = cached.etag
    const answer = await getOrTooLarge(get, table, path, sent)
    if ('status' in answer) return answer
    if (cached !== undefined && answer.statusCode === 304) return { status: 200, metadata: cached.metadata }
    const load = readLoadAnswer(answer, reuse)
    const etag = answer.headers.etag
    if (load.metadata !== undefined && typeof etag === 'string' && etag !== '') cache.set(key, etag, load.metadata, bodyLength(answer))
    else cache.delete(key)
    return load
  }
}

/**
 * The GET, with one failure turned into a final answer: metadata larger than the upstream client
 * reads whole (`--upstream-max-response`, the memory one base may take). Retrying cannot help (the
 * metadata only grows), so it is not the 503 of an unreachable upstream but a 400 that says which
 * setting to raise; nothing is forwarded.
 */
async function getOrTooLarge (get: UpstreamGet, table: TableRef, path: string, headers: IncomingHttpHeaders): Promise<UpstreamAnswer | BaseLoad> {
  try {
    return await get(path, headers)
  } catch (err) {
    // The transports put the code on the error itself or on its cause.
    const tooLarge = [err, (err as { cause?: unknown } | undefined)?.cause].find(e => (e as { code?: unknown } | undefined)?.code === 'ICEGUARD_RESPONSE_TOO_LARGE')
    if (tooLarge === undefined) throw err
    return refusal(ERRORS.BASE_TOO_LARGE,
      `Cannot judge a commit to table ${tableName(table)}: its metadata is larger than the gate reads whole ` +
      `(${String((tooLarge as { message?: unknown }).message)}); nothing was committed. Raise --upstream-max-response (ICEGUARD_UPSTREAM_MAX_RESPONSE) above the size of the table's loadTable answer`)
  }
}

/** The size of an answer's body, without joining its pieces. */
function bodyLength (answer: UpstreamAnswer): number {
  if (answer.chunks === undefined) return answer.body.length
  let n = 0
  for (const piece of answer.chunks) n += piece.length
  return n
}

/** A load answered by iceguard itself, in the shape of an upstream refusal the gate relays. */
function refusal (error: ErrorDef, message: string): BaseLoad {
  const { statusCode, body } = answer(error, message)
  return { status: statusCode, rawStatusBody: Buffer.from(JSON.stringify(body)), headers: { 'content-type': 'application/json' } }
}

/** Where a table's schemas from its previous read are kept (`schema-texts.ts`), and under which key. */
interface SchemaReuse {
  readonly texts: SchemaTexts
  readonly key: string
}

/**
 * Turns a loadTable answer into a base: parsed metadata on 200, the upstream's own answer
 * otherwise. With `reuse`, schemas whose exact text the table's previous read held are not
 * parsed again, and this read's schemas are kept for the next.
 */
export function readLoadAnswer (answer: UpstreamAnswer, reuse?: SchemaReuse): BaseLoad {
  if (answer.statusCode !== 200) {
    return { status: answer.statusCode, rawStatusBody: answer.body, headers: answer.headers }
  }
  const read = readBaseText(answer.chunks ?? answer.body, reuse?.texts.get(reuse.key))
  if (!read.ok) return { status: 200, problem: read.message }
  if (!isObject(read.value) || !isObject(read.value.metadata)) {
    return { status: 200, problem: 'the answer has no metadata object' }
  }
  const { metadata, issues } = parseTableMetadata(read.value.metadata, { knownSchemas: read.reused })
  if (metadata === undefined) {
    const first = issues[0]
    return { status: 200, problem: first === undefined ? 'unreadable metadata' : `${first.at}: ${first.message}` }
  }
  if (reuse !== undefined) {
    const known = read.collect(metadata.schemas)
    if (known !== undefined) reuse.texts.set(reuse.key, known)
  }
  // The upstream's own metadata: its schema history may be summarised for later commits.
  markServed(metadata)
  return { status: 200, metadata }
}
