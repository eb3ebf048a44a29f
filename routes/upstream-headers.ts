/**
 * The headers a route sends upstream for the request it serves: shared by the Iceberg routes and
 * the admin API's schema-change calls, so neither route family imports the other.
 */
import type { FastifyRequest } from 'fastify'
import type { TLSSocket } from 'node:tls'
import { forwardRequestHeaders } from '../src/upstream/index.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Request headers that carried the admin credential and must not be sent upstream, as lower-case
     * names (set by the admin authentication); left out of what is rebuilt from the raw headers.
     */
    withheldHeaders?: ReadonlySet<string>
  }
}

/**
 * Request headers for the upstream: the client's, hop-by-hop and iceguard's own credentials dropped
 * (src/upstream/headers.ts), X-Forwarded-* added, and whatever the admin authentication withheld
 * (`request.withheldHeaders`: an `Authorization` that carried the admin credential) left out.
 */
export function upstreamHeaders (request: FastifyRequest, extra?: Readonly<Record<string, string>>): string[] {
  const socket = request.raw.socket as Partial<TLSSocket> | null
  const flat = forwardRequestHeaders(request.raw.rawHeaders ?? [], {
    remoteAddress: socket?.remoteAddress,
    encrypted: socket?.encrypted === true
  }, true, request.server.config.adminToken)
  const withheld = request.withheldHeaders
  if (extra === undefined && withheld === undefined) return flat
  const out: string[] = []
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i] as string
    if (extra !== undefined && name in extra) continue
    if (withheld !== undefined && withheld.has(name)) continue
    out.push(name, flat[i + 1] as string)
  }
  if (extra === undefined) return out
  for (const [name, value] of Object.entries(extra)) out.push(name, value)
  return out
}
