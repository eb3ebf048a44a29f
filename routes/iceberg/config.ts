/**
 * `GET /v1/config`: forwarded, then `overrides.uri`/`defaults.uri` rewritten so that clients keep
 * talking to the proxy (see src/http/catalog-config.ts). Non-200 answers are relayed unchanged.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { rewriteCatalogConfig } from '../../src/http/catalog-config.js'
import { ERRORS, UpstreamError } from '../../src/errors.js'
import { upstreamHeaders } from './forward-buffered.js'

/** Headers that describe the upstream's body, which is replaced. */
const BODY_HEADERS = new Set(['content-length', 'content-encoding', 'etag', 'content-md5', 'digest'])

export async function serveConfig (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { upstream, config } = request.server
  const res = await upstream.client.request({
    method: 'GET',
    path: request.raw.url ?? request.url,
    // The body is rewritten, so ask for it uncompressed.
    headers: upstreamHeaders(request, { 'accept-encoding': 'identity' })
  })
  reply.code(res.statusCode)
  if (res.statusCode !== 200) {
    for (const [name, value] of Object.entries(res.headers)) if (name !== 'content-length') reply.header(name, value)
    return reply.send(res.body)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(res.body.toString('utf8'))
  } catch (err) {
    throw new UpstreamError(ERRORS.UPSTREAM_BAD_RESPONSE, 'The upstream catalog answered /v1/config with a body that is not JSON', true, 'bad-response', { cause: err })
  }
  for (const [name, value] of Object.entries(res.headers)) if (!BODY_HEADERS.has(name)) reply.header(name, value)
  return reply.type('application/json').send(JSON.stringify(rewriteCatalogConfig(parsed, config.publicUrl)))
}
