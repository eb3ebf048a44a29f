/**
 * Header work for forwarding, kept to one pass over the raw header list.
 *
 * Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are dropped both ways,
 * together with any header the `Connection` header names. `Host` is left to the upstream
 * dispatcher, which writes the upstream's own. `Expect` is dropped because Node already answered
 * `100-continue` to the client and undici refuses the header.
 *
 * iceguard's own credentials are dropped too, on every route and transport: the admin token's
 * header and the console's cookie belong to iceguard, never to the catalog (docs/security.md).
 */
import { ADMIN_TOKEN_HEADER, withoutConsoleCookie } from '../auth/credential-names.js'
import { carriesStaticToken } from '../auth/static-token.js'

const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect'
])

/** Connection tokens that name no header. */
const CONNECTION_OPTIONS: ReadonlySet<string> = new Set(['close', 'keep-alive'])

function namedByConnection (value: string, into: Set<string>): void {
  for (const token of value.split(',')) {
    const t = token.trim().toLowerCase()
    if (t !== '' && !CONNECTION_OPTIONS.has(t)) into.add(t)
  }
}

export interface ClientInfo {
  readonly remoteAddress: string | undefined
  readonly encrypted: boolean
}

/**
 * Request headers for the upstream, as a flat `[name, value, …]` list (what undici takes without
 * copying). With `client` given, `X-Forwarded-For` gets the client's address appended; `X-Forwarded-Proto` and
 * `X-Forwarded-Host` are kept when a front proxy set them, else added. When `dropLength` is set,
 * `Content-Length` is dropped too (the body is sent from a Buffer that sets its own). With
 * `adminToken` (the static `ICEGUARD_ADMIN_TOKEN`), an `Authorization` that carries it is dropped:
 * it is iceguard's credential, never the catalog's, on whatever route it was sent.
 */
export function forwardRequestHeaders (rawHeaders: readonly string[], client: ClientInfo | undefined, dropLength = false, adminToken?: string): string[] {
  const out: string[] = []
  let xff: string | undefined
  let host: string | undefined
  let hasProto = false
  let hasFwdHost = false
  let named: Set<string> | undefined
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    const value = rawHeaders[i + 1] as string
    const lower = name.toLowerCase()
    if (HOP_BY_HOP.has(lower)) {
      if (lower === 'connection') namedByConnection(value, named ??= new Set())
      else if (lower === 'host') host = value
      continue
    }
    if (lower === 'x-forwarded-for') {
      xff = xff === undefined ? value : `${xff}, ${value}`
      continue
    }
    if (lower === 'content-length' && dropLength) continue
    if (lower === ADMIN_TOKEN_HEADER) continue
    if (lower === 'authorization' && adminToken !== undefined && carriesStaticToken(adminToken, value)) continue
    if (lower === 'cookie') {
      const kept = withoutConsoleCookie(value)
      if (kept !== undefined) out.push(lower, kept)
      continue
    }
    if (lower === 'x-forwarded-proto') hasProto = true
    else if (lower === 'x-forwarded-host') hasFwdHost = true
    out.push(lower, value)
  }
  if (named !== undefined && named.size > 0) dropNamed(out, named)
  const addr = client?.remoteAddress
  if (addr !== undefined) out.push('x-forwarded-for', xff === undefined ? addr : `${xff}, ${addr}`)
  else if (xff !== undefined) out.push('x-forwarded-for', xff)
  if (client === undefined) return out
  if (!hasProto) out.push('x-forwarded-proto', client.encrypted ? 'https' : 'http')
  if (!hasFwdHost && host !== undefined) out.push('x-forwarded-host', host)
  return out
}

/** Response headers for the client, from undici's raw `Buffer` pairs, as a flat list for writeHead. */
export function relayResponseHeaders (rawHeaders: readonly Buffer[] | readonly string[], dropLength = false): string[] {
  const out: string[] = []
  let named: Set<string> | undefined
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toString('latin1')
    const value = rawHeaders[i + 1]!.toString('latin1')
    const lower = name.toLowerCase()
    if (HOP_BY_HOP.has(lower) && lower !== 'host' && lower !== 'expect') {
      if (lower === 'connection') namedByConnection(value, named ??= new Set())
      continue
    }
    if (dropLength && lower === 'content-length') continue
    out.push(name, value)
  }
  if (named !== undefined && named.size > 0) dropNamed(out, named)
  return out
}

function dropNamed (flat: string[], named: ReadonlySet<string>): void {
  let w = 0
  for (let r = 0; r < flat.length; r += 2) {
    if (named.has((flat[r] as string).toLowerCase())) continue
    flat[w++] = flat[r] as string
    flat[w++] = flat[r + 1] as string
  }
  flat.length = w
}

/** Flat header list → plain object (lower-case names; a repeated name gives an array). */
export function headersToObject (flat: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (let i = 0; i < flat.length; i += 2) {
    const name = (flat[i] as string).toLowerCase()
    const value = flat[i + 1] as string
    const prev = out[name]
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
  }
  return out
}
