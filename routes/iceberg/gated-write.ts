/**
 * Hands a schema-relevant write to the gate (`app.gate`, src/gate/commit-gate.ts) and sends its
 * outcome: the upstream's answer relayed as it came (plus the gate's warning header), or the
 * gate's own ErrorModel when it refused, with nothing forwarded.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ClassifiedRequest } from '../../src/edge/classify.js'
import type { GatedKind } from '../../src/gate/commit-gate.js'
import { upstreamHeaders } from './forward-buffered.js'
import { markJudged } from '../../src/edge/request-state.js'

export async function gateWrite (request: FastifyRequest, reply: FastifyReply, route: ClassifiedRequest,
  body: Buffer, scanned = false): Promise<FastifyReply> {
  markJudged(request.raw)
  const outcome = await request.server.gate.handle({
    kind: route.kind as GatedKind,
    ident: { prefix: route.prefix, namespace: route.namespace, table: route.table },
    method: request.method,
    path: request.raw.url ?? request.url,
    rawBody: body,
    scanned,
    headers: request.headers,
    forwardHeaders: upstreamHeaders(request),
    requestId: String(request.id)
  })
  if (outcome.type === 'answer') {
    const { statusCode, headers, body: error } = outcome.answer
    reply.code(statusCode)
    for (const [name, value] of Object.entries(headers)) reply.header(name, value)
    return reply.send(error)
  }
  const res = outcome.response
  reply.code(res.statusCode)
  for (const [name, value] of Object.entries(res.headers)) {
    if (name !== 'content-length' && value !== undefined) reply.header(name, value)
  }
  for (const [name, value] of Object.entries(outcome.headers)) reply.header(name, value)
  return reply.send(res.body)
}
