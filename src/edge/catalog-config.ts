/**
 * The `/v1/config` rewrite. Java, pyiceberg and iceberg-rust all re-point themselves at
 * `overrides.uri` (Java `ConfigResponse.merge` then `HTTPClient.builder(...).uri(...)`), so an
 * upstream that advertises its own address would route clients around the proxy for every later
 * call. The URI is replaced by the proxy's public URL when one is configured, and removed
 * otherwise; `defaults.uri` gets the same treatment. Everything else is kept as the upstream sent it.
 */
import { ERRORS, UpstreamError } from '../errors.js'
import type { UpstreamResponse } from '../upstream/undici/client.js'

export function rewriteCatalogConfig (config: unknown, publicUrl: string | undefined): unknown {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return config
  const out = { ...(config as Record<string, unknown>) }
  for (const section of ['overrides', 'defaults']) {
    const map = out[section]
    if (map === null || typeof map !== 'object' || Array.isArray(map) || !('uri' in map)) continue
    const copy = { ...(map as Record<string, unknown>) }
    if (publicUrl === undefined) delete copy.uri
    else copy.uri = publicUrl
    out[section] = copy
  }
  return out
}

/** Headers that describe the upstream's body, which is replaced. */
const BODY_HEADERS = new Set(['content-length', 'content-encoding', 'etag', 'content-md5', 'digest', 'content-type', 'transfer-encoding'])

interface ConfigAnswer {
  readonly statusCode: number
  readonly headers: Record<string, string | string[]>
  readonly body: Buffer
}

/**
 * The answer to `GET /v1/config` from the upstream's (asked for uncompressed): a 200 with its
 * `uri`s rewritten, anything else relayed unchanged. Both transports send what this returns.
 * Throws an UpstreamError when a 200 carries no JSON.
 */
export function configAnswer (res: UpstreamResponse, publicUrl: string | undefined): ConfigAnswer {
  if (res.statusCode !== 200) return res
  let parsed: unknown
  try {
    parsed = JSON.parse(res.body.toString('utf8'))
  } catch (err) {
    throw new UpstreamError(ERRORS.UPSTREAM_BAD_RESPONSE, 'The upstream catalog answered /v1/config with a body that is not JSON', true, 'bad-response', { cause: err })
  }
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(res.headers)) if (!BODY_HEADERS.has(name)) headers[name] = value
  headers['content-type'] = 'application/json; charset=utf-8'
  return { statusCode: 200, headers, body: Buffer.from(JSON.stringify(rewriteCatalogConfig(parsed, publicUrl))) }
}
