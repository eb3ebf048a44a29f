import type { IncomingHttpHeaders } from 'node:http'

// RFC 9110 §7.6.1: connection-specific fields are not forwarded; `host` is the proxy's own.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host'])

/** A copy of `headers` without the hop-by-hop fields. */
export function dropHopByHop (headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const k in headers) {
    const v = headers[k]
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v
  }
  return out
}
