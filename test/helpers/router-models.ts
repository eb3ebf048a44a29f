/**
 * Which write, if any, a real catalog's router would apply for `POST <target>`. Each model is
 * written from the router's source (read, not copied), independently of iceguard's own route table,
 * so a route or a spelling iceguard misses shows up as a difference:
 *
 * - `restFixture`: the Iceberg REST fixture, Jetty + `RESTCatalogServlet`. Jetty refuses a target
 *   with `#`, `//`, `%2F`, `%2e` or `\`; the servlet splits `getRequestURI()` (still encoded, path
 *   parameters kept) on `/`, and `Route.matches` compares route words with `equalsIgnoreCase`; routes
 *   have no `{prefix}` (`Route` drops it) (apache/iceberg core/src/test/java/org/apache/iceberg/rest/
 *   Route.java, RESTCatalogServlet.java). Raw `.`/`..` segments are resolved first (generous: Jetty
 *   canonicalises them before dispatch).
 * - `quarkus`: Quarkus REST on Vert.x (Polaris, Nessie). The path ends at `?` or `#`; it is
 *   normalised (percent-encoded unreserved characters decoded, a malformed escape refused, dot
 *   segments removed, `//` collapsed: eclipse-vertx `RFC3986.normalizePath`, `decodeUnreserved`,
 *   `removeDotSegments`), `;params` are dropped per segment, a trailing `/` is ignored, and route
 *   words compare exactly, with or without `{prefix}`.
 * - `axum`: axum on hyper (Lakekeeper). httparse takes `#` in the target and `http::PathAndQuery`
 *   cuts the path there (hyperium/http src/uri/path.rs); matchit compares the raw path exactly, with
 *   or without `{prefix}`.
 */

/** The REST spec's writes that install or replace metadata: path after `/v1/{prefix}/`. */
const WRITES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['updateTable', ['namespaces', '{}', 'tables', '{}']],
  ['createTable', ['namespaces', '{}', 'tables']],
  ['registerTable', ['namespaces', '{}', 'register']],
  ['commitTransaction', ['transactions', 'commit']],
  ['createView', ['namespaces', '{}', 'views']],
  ['replaceView', ['namespaces', '{}', 'views', '{}']],
  ['registerView', ['namespaces', '{}', 'register-view']]
]

export type RouterModel = (target: string) => string | undefined

type Equals = (got: string, word: string) => boolean

const exact: Equals = (got, word) => got === word
// Java's equalsIgnoreCase on ASCII route words.
const ignoringCase: Equals = (got, word) => got.length === word.length && got.toLowerCase() === word

function matchWrite (segments: readonly string[], eq: Equals, prefixed: boolean): string | undefined {
  if (segments.length === 0 || !eq(segments[0] as string, 'v1')) return undefined
  // A `{prefix}` parameter is never empty.
  const readings = prefixed && segments[1] !== '' ? [segments.slice(1), segments.slice(2)] : [segments.slice(1)]
  for (const rest of readings) {
    for (const [operationId, words] of WRITES) {
      if (words.length !== rest.length) continue
      if (words.every((w, i) => w === '{}' ? (rest[i] as string) !== '' : eq(rest[i] as string, w))) return operationId
    }
  }
  return undefined
}

/** RFC 3986 §5.2.4 on a path of `/`-separated segments. */
function removeDotSegments (path: string): string {
  const out: string[] = []
  const parts = path.split('/')
  for (const [i, part] of parts.entries()) {
    if (part === '.' || part === '..') {
      if (part === '..' && out.length > 1) out.pop()
      if (i === parts.length - 1) out.push('')
      continue
    }
    out.push(part)
  }
  return out.join('/')
}

const UNRESERVED = /[A-Za-z0-9\-._~]/

function decodeUnreserved (path: string): string | undefined {
  let out = ''
  for (let i = 0; i < path.length; i++) {
    if (path[i] !== '%') {
      out += path[i] as string
      continue
    }
    const hex = path.slice(i + 1, i + 3)
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined
    const c = String.fromCharCode(parseInt(hex, 16))
    out += UNRESERVED.test(c) ? c : `%${hex}`
    i += 2
  }
  return out
}

export const restFixture: RouterModel = (target) => {
  const path = target.split('?')[0] as string
  if (target.includes('#') || /\/\/|%2f|%2e|\\/i.test(path)) return undefined
  return matchWrite(removeDotSegments(path).slice(1).split('/'), ignoringCase, false)
}

export const quarkus: RouterModel = (target) => {
  const raw = target.split(/[?#]/)[0] as string
  const decoded = decodeUnreserved(raw)
  if (decoded === undefined) return undefined
  const normalised = removeDotSegments(decoded).replace(/\/{2,}/g, '/')
  const segments = normalised.slice(1).split('/').map(s => s.split(';')[0] as string)
  if (segments.length > 1 && segments.at(-1) === '') segments.pop()
  return matchWrite(segments, exact, true)
}

export const axum: RouterModel = (target) => {
  const path = target.split('#')[0]?.split('?')[0] as string
  return matchWrite(path.slice(1).split('/'), exact, true)
}

export const ROUTER_MODELS: Readonly<Record<string, RouterModel>> = { restFixture, quarkus, axum }
