/**
 * Writes the gate may need to see: table and transaction commits, creates, registers and view
 * writes, with their body already read into a Buffer (`request.rawBody`).
 *
 * This is where the schema gate plugs in: evaluate the commit, then either reject with an
 * ErrorModel or call `forwardBuffered` with the bytes to send. Until then every write is forwarded
 * byte for byte.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ClassifiedRequest } from '../../src/edge/classify.js'
import { hasContentCoding, needsGate } from '../../src/json/commit-scan.js'
import { forwardBuffered } from './forward-buffered.js'
import { gateWrite } from './gated-write.js'

export async function handleWrite (request: FastifyRequest, reply: FastifyReply, route: ClassifiedRequest,
  body: Buffer): Promise<FastifyReply> {
  const isCommit = route.kind === 'update-table' || route.kind === 'transaction'
  if (isCommit && !hasContentCoding(request.headers['content-encoding']) && !needsGate(body)) {
    // Data-only commit (add-snapshot, properties…): nothing for the gate to judge.
    return forwardBuffered(request, reply, body)
  }
  // Schema-relevant write: the gate judges it, then forwards or answers (src/gate/commit-gate.ts).
  // A commit got here because `needsGate` said yes: the gate need not scan it again.
  return gateWrite(request, reply, route, body, isCommit && !hasContentCoding(request.headers['content-encoding']))
}
