/**
 * Names what an Iceberg REST request is, from its method and raw path, without a router.
 *
 * The `{prefix}` segment is optional (REST spec: "An optional prefix in the path"; the Java client
 * drops it when no prefix is configured), so both `/v1/namespaces/…` and `/v1/<prefix>/namespaces/…`
 * are tried. Classification errs towards the gate: empty segments, dot segments and `;` path
 * parameters are normalised the way servlet and JAX-RS servers do before matching, so a write
 * cannot slip past as pass-through by dressing its path. Nothing is rejected here.
 */

export type RouteKind =
  | 'config'
  | 'update-table'
  | 'transaction'
  | 'create-table'
  | 'register-table'
  | 'update-view'
  | 'create-view'
  | 'passthrough'

export interface ClassifiedRequest {
  readonly kind: RouteKind
  /** Decoded `{prefix}` when the path carries one. */
  readonly prefix?: string
  /** Decoded namespace levels (empty for config, transactions and pass-through). */
  readonly namespace: string[]
  /** Decoded table or view name for update-table / update-view. */
  readonly table?: string
}

/** The kinds that carry a body the gate may need to read. */
export const WRITE_KINDS: ReadonlySet<RouteKind> = new Set<RouteKind>([
  'update-table', 'transaction', 'create-table', 'register-table', 'update-view', 'create-view'
])

/** The classification of every request the gate never looks at (shared, frozen). */
export const PASSTHROUGH: ClassifiedRequest = Object.freeze({ kind: 'passthrough', namespace: [] }) as ClassifiedRequest
const ROOTS = new Set(['namespaces', 'transactions', 'tables', 'views', 'config', 'oauth'])

/**
 * `rawPath` is the request target as received (path and query), with any upstream base path
 * already absent. Cheap for the common case: only POST and `GET /v1/config` are inspected.
 */
export function classifyRequest (method: string, rawPath: string): ClassifiedRequest {
  if (method !== 'POST' && method !== 'GET') return PASSTHROUGH
  const q = rawPath.indexOf('?')
  const path = q === -1 ? rawPath : rawPath.slice(0, q)
  if (method === 'GET') {
    return path === '/v1/config' || normalise(path).join('/') === 'v1/config' ? { kind: 'config', namespace: [] } : PASSTHROUGH
  }
  const segs = normalise(path)
  if (segs[0] !== 'v1') return PASSTHROUGH
  const rest = segs.slice(1)
  const direct = ROOTS.has(rest[0] ?? '') ? matchWrite(rest) : undefined
  if (direct !== undefined) return direct
  if (rest.length > 1) {
    const prefixed = matchWrite(rest.slice(1))
    if (prefixed !== undefined) return { ...prefixed, prefix: decodeSegment(rest[0] ?? '') }
  }
  return PASSTHROUGH
}

function matchWrite (r: readonly string[]): ClassifiedRequest | undefined {
  if (r[0] === 'transactions') {
    return r.length === 2 && r[1] === 'commit' ? { kind: 'transaction', namespace: [] } : undefined
  }
  if (r[0] !== 'namespaces' || r[1] === undefined) return undefined
  const namespace = decodeNamespace(r[1])
  if (r.length === 3) {
    if (r[2] === 'tables') return { kind: 'create-table', namespace }
    if (r[2] === 'register') return { kind: 'register-table', namespace }
    if (r[2] === 'views') return { kind: 'create-view', namespace }
  } else if (r.length === 4 && r[3] !== undefined) {
    if (r[2] === 'tables') return { kind: 'update-table', namespace, table: decodeSegment(r[3]) }
    if (r[2] === 'views') return { kind: 'update-view', namespace, table: decodeSegment(r[3]) }
  }
  return undefined
}

/**
 * Splits a path into segments the way servers match them: empty segments dropped (`//`, trailing
 * `/`), `;params` cut off, `.`/`..` (also percent-encoded) resolved.
 */
function normalise (path: string): string[] {
  const out: string[] = []
  for (const part of path.split('/')) {
    const semi = part.indexOf(';')
    const seg = semi === -1 ? part : part.slice(0, semi)
    if (seg === '') continue
    const dots = seg.length <= 6 ? seg.toLowerCase().replaceAll('%2e', '.') : seg
    if (dots === '.') continue
    if (dots === '..') {
      out.pop()
      continue
    }
    out.push(seg)
  }
  return out
}

/**
 * Form decoding as the Java reference server does (`URLDecoder`): `+` and `%20` are both a space.
 * A malformed escape leaves the segment as it came (the upstream will judge it).
 */
export function decodeSegment (segment: string): string {
  const plus = segment.includes('+') ? segment.replaceAll('+', ' ') : segment
  if (!plus.includes('%')) return plus
  try {
    return decodeURIComponent(plus)
  } catch {
    return plus
  }
}

/** Namespace levels travel joined by the unit separator 0x1F, normally encoded as `%1F`. */
export function decodeNamespace (segment: string): string[] {
  return decodeSegment(segment).split('\x1f')
}
