/**
 * Triage of every request, written once and called by both transports (the fast lane and the
 * node:http front door, which hands its result to Fastify): what the request is, what target is
 * forwarded for it, or why it is refused with nothing forwarded.
 *
 * 1. A target whose first segment is not `v1` (after decoding, ignoring case) is iceguard's own
 *    (`local`: health, admin, docs); Fastify answers it and nothing is forwarded.
 * 2. The target is made canonical (src/edge/request-target.ts) or refused.
 * 3. The path is matched against the route table (src/edge/rest-routes.ts) the way the most lenient
 *    catalog would: route words ignoring case (the REST fixture's `equalsIgnoreCase`), with and
 *    without the optional `{prefix}` segment.
 * 4. Deny by default: a request with a write method (anything but GET and HEAD) is a `gate` route,
 *    a `pass` route, or refused. A GET or HEAD carrying a body is refused: a catalog could read it.
 *
 * The target forwarded is the canonical one, route words lower-cased, whenever it differs from the
 * one received, so the upstream routes exactly what was judged here. Envoy's `normalize_path`,
 * `merge_slashes` and `path_with_escaped_slashes_action` exist for the same reason (an
 * authorisation filter and its upstream must not disagree about a path): the form judged is the
 * form forwarded. Refusing every target whose canonical form differs instead would break real
 * clients (Java writes `~` as `%7E`); what could resolve to another path is refused rather than
 * rewritten (docs/security.md). When the target is already canonical (every real client's
 * request) the received string itself is forwarded.
 */
import { namespaceLevels } from '../iceberg/rest-path.js'
import { canonicalTarget, printable } from './request-target.js'
import { REST_ROUTES, type GatedKind, type RestRoute } from './rest-routes.js'

export type { GatedKind } from './rest-routes.js'

export type RouteKind =
  | GatedKind
  | 'config'
  /** Forwarded unjudged: a read, or a write route known to be safe. */
  | 'passthrough'
  /** Answered with a 400 ErrorModel; nothing is forwarded. */
  | 'refused'
  /** Not an Iceberg REST call (iceguard's own routes): Fastify's to answer, never forwarded. */
  | 'local'

export interface ClassifiedRequest {
  readonly kind: RouteKind
  /** The target (path and query) to forward; for `local` and `refused`, the one received. */
  readonly target: string
  /** The route's operationId, when the path is one the table knows. */
  readonly operationId?: string
  /** Decoded `{prefix}`, when the path has one (gated kinds). */
  readonly prefix?: string
  /** Decoded namespace levels (gated kinds that name a namespace). */
  readonly namespace: readonly string[]
  /** Decoded table or view name (update-table, update-view). */
  readonly table?: string
  /** Why a `refused` request is refused: the ErrorModel's message. */
  readonly message?: string
}

/** The kinds that carry a body the gate may need to read. */
export const WRITE_KINDS: ReadonlySet<RouteKind> = new Set<RouteKind>([
  'update-table', 'transaction', 'create-table', 'register-table', 'update-view', 'create-view', 'register-view',
  'drop-table', 'rename-table', 'drop-view', 'rename-view'
])

const NONE: readonly string[] = Object.freeze([])

interface CompiledRoute {
  readonly route: RestRoute
  /**
   * Segments after `v1` (and after `{prefix}`, which is not among them): the route word, or ''
   * where the segment is a variable, named at the same place in `variables`.
   */
  readonly words: readonly string[]
  readonly variables: readonly string[]
  readonly prefixed: boolean
}

function compile (route: RestRoute): CompiledRoute {
  const parts = route.path.split('/').slice(2)
  const prefixed = parts[0] === '{prefix}'
  const segments = prefixed ? parts.slice(1) : parts
  return {
    route,
    words: segments.map(p => p.startsWith('{') ? '' : p),
    variables: segments.map(p => p.startsWith('{') ? p.slice(1, -1) : ''),
    prefixed
  }
}

const BY_METHOD = new Map<string, CompiledRoute[]>()
for (const route of REST_ROUTES) {
  const list = BY_METHOD.get(route.method) ?? []
  list.push(compile(route))
  BY_METHOD.set(route.method, list)
}
/** More segments than any route has: no match, without looking further. */
const MAX_WORDS = Math.max(...REST_ROUTES.map(r => r.path.split('/').length))

/** Whether `method` can change anything at a catalog: everything but GET and HEAD. */
export function isWriteMethod (method: string): boolean {
  return method !== 'GET' && method !== 'HEAD'
}

/**
 * Classifies a request from its method and target as received (path and query, any upstream base
 * path absent). `hasBody`: the request carries a body (Content-Length > 0 or Transfer-Encoding).
 */
export function classifyRequest (method: string, raw: string, hasBody = false): ClassifiedRequest {
  if (raw.charCodeAt(0) !== 0x2f) return refused(method, raw, 'the request target is not an absolute path (origin form)')
  if (!isRestTarget(raw)) return { kind: 'local', target: raw, namespace: NONE }
  const canonical = canonicalTarget(raw)
  if (typeof canonical !== 'string') return refused(method, raw, `the request target ${canonical.refused}`)
  const write = isWriteMethod(method)
  if (!write && hasBody) return refused(method, raw, `a ${method} request must not carry a body (a catalog could read it)`)

  const q = canonical.indexOf('?')
  const pathEnd = q === -1 ? canonical.length : q
  // A read needs the route table only to find `/v1/config` and to lower-case route words; a path
  // in lower case already (every real client's) is forwarded as it is, without a lookup.
  if (!write && !hasUpperCase(canonical, pathEnd) && !(pathEnd === 10 && canonical.startsWith('/v1/config'))) {
    return { kind: 'passthrough', target: canonical, namespace: NONE }
  }
  // Segments after `/v1/`: the canonical path has no empty segment, so each `/` starts one.
  let count = 0
  for (let i = 3; i !== -1 && i < pathEnd; i = canonical.indexOf('/', i + 1)) count++
  const routes = count < MAX_WORDS ? BY_METHOD.get(method) : undefined
  let plain: CompiledRoute | undefined
  let prefixed: CompiledRoute | undefined
  if (routes !== undefined) {
    for (const r of routes) {
      if (plain === undefined && r.words.length === count && wordsMatch(canonical, pathEnd, r.words, 0)) plain = r
      if (prefixed === undefined && r.prefixed && r.words.length === count - 1 && wordsMatch(canonical, pathEnd, r.words, 1)) prefixed = r
    }
  }
  if (plain !== undefined && prefixed !== undefined && write) {
    // Two routes in one path (a prefix or namespace spelled like a route word): which one the
    // catalog applies depends on whether it has a prefix. Refused rather than guessed.
    return refused(method, raw, `the path reads as ${plain.route.operationId} without a prefix and as ${prefixed.route.operationId} with prefix ` +
      `"${printable(segment(canonical, 0))}"; iceguard cannot tell which the catalog would apply`)
  }
  const match = plain ?? prefixed
  if (match === undefined) {
    if (write) {
      return refused(method, raw, 'not a route of the Iceberg REST API, and iceguard refuses the writes it does not recognise')
    }
    return { kind: 'passthrough', target: lowerWords(canonical, pathEnd, undefined, 0), namespace: NONE }
  }
  const offset = match === plain ? 0 : 1
  const target = lowerWords(canonical, pathEnd, match.words, offset)
  const { route } = match
  switch (route.treatment) {
    case 'config':
      return { kind: 'config', target, operationId: route.operationId, namespace: NONE }
    case 'read':
      return { kind: 'passthrough', target, namespace: NONE }
    case 'pass':
      return { kind: 'passthrough', target, operationId: route.operationId, namespace: NONE }
    case 'gate':
      return gated(method, raw, target, match, offset)
  }
}

/** The identifiers of a gated write, decoded, or a refusal when they could be read two ways. */
function gated (method: string, raw: string, target: string, match: CompiledRoute, offset: number): ClassifiedRequest {
  const kind = match.route.kind as GatedKind
  let prefix: string | undefined
  let namespace: readonly string[] = NONE
  let table: string | undefined
  const names: Array<[string, string]> = []
  if (offset === 1) names.push(['prefix', segment(target, 0)])
  match.variables.forEach((v, i) => { if (v !== '') names.push([v, segment(target, i + offset)]) })
  for (const [name, text] of names) {
    const value = decodePathSegment(text)
    if (value === undefined) return refused(method, raw, `the ${name} segment ("${printable(text)}") does not decode to UTF-8 text`)
    if (name === 'prefix') prefix = value
    else if (name === 'namespace') namespace = namespaceLevels(value)
    else table = value
  }
  return {
    kind,
    target,
    operationId: match.route.operationId,
    ...(prefix !== undefined && { prefix }),
    namespace,
    ...(table !== undefined && { table })
  }
}

function refused (method: string, raw: string, detail: string): ClassifiedRequest {
  const q = raw.indexOf('?')
  const path = printable(q === -1 ? raw : raw.slice(0, q))
  return { kind: 'refused', target: raw, namespace: NONE, message: `Cannot forward ${method} ${path}: ${detail}; nothing was forwarded` }
}

/**
 * Whether the first segment is `v1` once decoded and compared ignoring case, as the REST fixture
 * and Quarkus would route it (`/V1/`, `/v%31/`), or the target starts with `//` (which Vert.x
 * collapses): such targets are the Iceberg REST API's, and canonicalised or refused.
 */
function isRestTarget (raw: string): boolean {
  if (raw.startsWith('/v1/')) return true
  const c1 = raw.charCodeAt(1)
  if (c1 === 0x2f) return true
  let i = 1
  let word = ''
  while (i < raw.length && word.length <= 2) {
    const c = raw.charCodeAt(i)
    if (c === 0x2f || c === 0x3f || c === 0x23 || c === 0x3b) break
    if (c === 0x25 && i + 2 < raw.length) {
      word += String.fromCharCode(parseInt(raw.slice(i + 1, i + 3), 16) || 0)
      i += 3
    } else {
      word += raw[i]
      i++
    }
  }
  if (word.toLowerCase() !== 'v1') return false
  // `/v1` alone or `/v1?…` names no route: iceguard's 404.
  const end = raw.charCodeAt(i)
  return end === 0x2f || end === 0x23 || end === 0x3b
}

/** Whether the route's words match the path's segments after `/v1/` (skipping `offset` of them). */
function wordsMatch (path: string, pathEnd: number, words: readonly string[], offset: number): boolean {
  let start = 4
  for (let k = 0; k < offset; k++) start = path.indexOf('/', start) + 1
  for (let w = 0; w < words.length; w++) {
    let end = path.indexOf('/', start)
    if (end === -1 || end > pathEnd) end = pathEnd
    const word = words[w] as string
    if (word !== '' && !equalsIgnoringCase(path, start, end, word)) return false
    start = end + 1
  }
  return true
}

function hasUpperCase (path: string, end: number): boolean {
  for (let i = 1; i < end; i++) {
    const c = path.charCodeAt(i)
    if (c >= 0x41 && c <= 0x5a) return true
  }
  return false
}

/** ASCII only: the canonical path has no other characters, so no Unicode case folding applies. */
function equalsIgnoringCase (path: string, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false
  for (let i = 0; i < word.length; i++) {
    const c = path.charCodeAt(start + i)
    if ((c >= 0x41 && c <= 0x5a ? c | 0x20 : c) !== word.charCodeAt(i)) return false
  }
  return true
}

/**
 * `path` with `v1` and the route's words (when a route matched) in lower case: the same string
 * when they already are.
 */
function lowerWords (path: string, pathEnd: number, words: readonly string[] | undefined, offset: number): string {
  let same = path.charCodeAt(1) === 0x76
  if (same && words !== undefined) {
    let start = 4
    for (let k = 0; k < offset; k++) start = path.indexOf('/', start) + 1
    for (const word of words) {
      let end = path.indexOf('/', start)
      if (end === -1 || end > pathEnd) end = pathEnd
      if (word !== '' && !path.startsWith(word, start)) {
        same = false
        break
      }
      start = end + 1
    }
  }
  if (same) return path
  const segments = path.slice(1, pathEnd).split('/')
  segments[0] = 'v1'
  words?.forEach((w, i) => { if (w !== '') segments[i + 1 + offset] = w })
  return `/${segments.join('/')}${path.slice(pathEnd)}`
}

/** The `n`th segment after `/v1/`, as it is in `path` (still encoded). */
function segment (path: string, n: number): string {
  const q = path.indexOf('?')
  const pathEnd = q === -1 ? path.length : q
  let start = 4
  for (let k = 0; k < n; k++) start = path.indexOf('/', start) + 1
  let end = path.indexOf('/', start)
  if (end === -1 || end > pathEnd) end = pathEnd
  return path.slice(start, end)
}

/**
 * A path segment percent-decoded (not form-decoded: `+` is refused before this, see `gated`), or
 * undefined when the bytes are not UTF-8. The target is canonical, so every escape is well formed.
 */
export function decodePathSegment (segment: string): string | undefined {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
