/**
 * Every error that leaves through Fastify becomes an Iceberg ErrorModel with `code` equal to the
 * HTTP status: GateErrors as catalogued, Fastify's own (body limit, media type, schema
 * validation) mapped to their catalogue entries, anything unexpected as a logged 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ERRORS, GateError, UpstreamError } from '../errors.js'
import { bodyTooLarge } from '../edge/read-body.js'

const STATUS_DEFS = new Map([
  [400, ERRORS.BAD_REQUEST],
  [401, ERRORS.NOT_AUTHORIZED],
  [403, ERRORS.FORBIDDEN],
  [404, ERRORS.NOT_FOUND],
  [405, ERRORS.METHOD_NOT_ALLOWED],
  [413, ERRORS.BODY_TOO_LARGE],
  [415, ERRORS.UNSUPPORTED_MEDIA_TYPE]
])

/** Maps any thrown value to a catalogued GateError. */
export function toGateError (err: unknown, bodyLimit: number): GateError {
  if (err instanceof GateError) return err
  const e = err as Partial<FastifyError> & { message?: string }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return bodyTooLarge(bodyLimit)
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GateError(ERRORS.MALFORMED_JSON, `Malformed request body: ${e.message ?? 'not valid JSON'}`, { cause: err })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GateError(ERRORS.UNSUPPORTED_MEDIA_TYPE, `Unsupported Content-Type: ${e.message ?? ''}`.trim(), { cause: err })
  }
  if (err instanceof SyntaxError) return new GateError(ERRORS.MALFORMED_JSON, `Malformed request body: ${err.message}`, { cause: err })
  if (e.validation !== undefined) return new GateError(ERRORS.BAD_REQUEST, `Invalid request: ${e.message ?? ''}`, { cause: err })
  const status = e.statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new GateError(STATUS_DEFS.get(status) ?? ERRORS.BAD_REQUEST, e.message ?? 'Bad request', { cause: err })
  }
  return new GateError(ERRORS.INTERNAL, 'iceguard failed while handling this request (see the iceguard log)', { cause: err })
}

export function sendGateError (reply: FastifyReply, err: GateError): FastifyReply {
  return reply.code(err.statusCode).headers(err.headers).type('application/json').send(err.toResponse())
}

async function errorHandler (app: FastifyInstance, opts: { bodyLimit: number }): Promise<void> {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const gate = toGateError(err, opts.bodyLimit)
    if (gate instanceof UpstreamError) {
      request.log.error({ code: gate.code, cause: (gate.cause as { code?: string } | undefined)?.code, sent: gate.sent }, gate.message)
    } else if (gate.statusCode >= 500) {
      request.log.error({ err }, 'request failed')
    }
    return sendGateError(reply, gate)
  })

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/'
    const allowed = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH']
      .filter((method) => method !== request.method && hasRoute(app, method, path))
    if (allowed.length > 0) {
      return sendGateError(reply.header('allow', allowed.join(', ')),
        new GateError(ERRORS.METHOD_NOT_ALLOWED, `Method ${request.method} is not allowed on ${path} (allowed: ${allowed.join(', ')})`))
    }
    return sendGateError(reply, new GateError(ERRORS.NOT_FOUND, `No route for ${request.method} ${path}`))
  })
}

/** `hasRoute` parses its url as a route pattern and throws on some (a `*` mid-path): no match, then. */
function hasRoute (app: FastifyInstance, method: string, url: string): boolean {
  try {
    return app.hasRoute({ method: method as 'GET', url })
  } catch {
    return false
  }
}

export default fp(errorHandler, { name: 'iceguard-error-handler', fastify: '5.x' })
