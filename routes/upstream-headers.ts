/**
 * The headers a route sends upstream for the request it serves: shared by the Iceberg routes and
 * the admin API's schema-change calls, so neither route family imports the other.
 */
import type { FastifyRequest } from 'fastify'
import type { TLSSocket } from 'node:tls'
import { forwardRequestHeaders } from '../src/upstream/index.js'

/** Request headers for the upstream: the client's, hop-by-hop dropped, X-Forwarded-* added. */
export function upstreamHeaders (request: FastifyRequest, extra?: Readonly<Record<string, string>>): string[] {
  const socket = request.raw.socket as Partial<TLSSocket> | null
  const flat = forwardRequestHeaders(request.raw.rawHeaders ?? [], {
    remoteAddress: socket?.remoteAddress,
    encrypted: socket?.encrypted === true
  }, true)
  if (extra === undefined) return flat
  const out: string[] = []
  for (let i = 0; i < flat.length; i += 2) {
    if (!((flat[i] as string) in extra)) out.push(flat[i] as string, flat[i + 1] as string)
  }
  for (const [name, value] of Object.entries(extra)) out.push(name, value)
  return out
}
