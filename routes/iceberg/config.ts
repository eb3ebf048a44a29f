/**
 * `GET /v1/config`: forwarded, then `overrides.uri`/`defaults.uri` rewritten so that clients keep
 * talking to the proxy (src/edge/catalog-config.ts, which the fast lane uses too). Non-200
 * answers are relayed unchanged.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { configAnswer } from '../../src/edge/catalog-config.js'
import { upstreamHeaders } from './forward-buffered.js'

export async function serveConfig (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { upstream, config } = request.server
  const res = await upstream.client.request({
    method: 'GET',
    path: request.raw.url ?? request.url,
    // The body is rewritten, so ask for it uncompressed.
    headers: upstreamHeaders(request, { 'accept-encoding': 'identity' })
  })
  const answer = configAnswer(res, config.publicUrl)
  reply.code(answer.statusCode)
  for (const [name, value] of Object.entries(answer.headers)) if (name !== 'content-length') reply.header(name, value)
  return reply.send(answer.body)
}
