/**
 * The `/v1/config` rewrite. Java, pyiceberg and iceberg-rust all re-point themselves at
 * `overrides.uri` (Java `ConfigResponse.merge` then `HTTPClient.builder(...).uri(...)`), so an
 * upstream that advertises its own address would route clients around the proxy for every later
 * call. The URI is replaced by the proxy's public URL when one is configured, and removed
 * otherwise; `defaults.uri` gets the same treatment. Everything else is kept as the upstream sent it.
 */

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
