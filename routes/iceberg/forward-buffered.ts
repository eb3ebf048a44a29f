/**
 * The seam between reading a write and sending it on: forwards exactly the bytes given and relays
 * the upstream's answer (status, headers, body) as it came. A transport failure becomes a
 * catalogued UpstreamError: 503 + Retry-After when nothing was sent, 502/504
 * CommitStateUnknownException once the write has left.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { upstreamHeaders } from '../upstream-headers.js'

export { upstreamHeaders }

interface ForwardBufferedOptions {
  /** Path and query to send instead of the one received (base path is still prepended). */
  readonly path?: string
  /** Headers to set or replace on top of the client's (lower-case names). */
  readonly headers?: Readonly<Record<string, string>>
  /** Whether failures after sending mean "commit state unknown" (default true). */
  readonly commit?: boolean
}

export async function forwardBuffered (request: FastifyRequest, reply: FastifyReply, body: Buffer,
  opts: ForwardBufferedOptions = {}): Promise<FastifyReply> {
  const res = await request.server.upstream.client.request({
    method: request.method,
    path: opts.path ?? request.raw.url ?? request.url,
    headers: upstreamHeaders(request, opts.headers),
    body,
    commit: opts.commit ?? true
  })
  reply.code(res.statusCode)
  for (const [name, value] of Object.entries(res.headers)) {
    if (name !== 'content-length') reply.header(name, value)
  }
  return reply.send(res.body)
}
