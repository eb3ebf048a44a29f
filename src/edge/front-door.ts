/**
 * The first code every request meets: a plain `node:http` handler in front of Fastify.
 *
 * Every request is classified once (src/edge/classify.ts, the same triage the fast lane runs):
 * refused targets and unrecognised writes are answered here with a 400 ErrorModel and nothing is
 * forwarded; for the rest `req.url` becomes the canonical target, so whatever forwards the request
 * later (the streaming forwarder, Fastify's routes, the gate) sends what was classified.
 * Pass-through calls go straight to the streaming forwarder: no routing tables, hooks, logging or
 * body parsing on that path. Table and transaction commits are read and scanned here; a commit
 * with only data actions (`commit-scan.ts`) is forwarded from the same bytes, the rest go to
 * Fastify with the body already read. Everything else (health, admin, docs, `/v1/config`,
 * creates, registers, views) is Fastify's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ERRORS, renderError, GateError } from '../errors.js'
import type { StreamForwarder } from '../upstream/undici/stream-forward.js'
import { hasContentCoding, needsGate } from '../json/commit-scan.js'
import { readBody } from './read-body.js'
import { routeOf, setPreReadBody } from './request-state.js'

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void

interface FrontDoorOptions {
  readonly forwarder: StreamForwarder
  readonly bodyLimit: number
  /** Fastify's request handler. */
  readonly app: RequestListener
  /** True once the server is closing: requests arriving on open connections are refused. */
  readonly closing?: () => boolean
  /** Seconds in Retry-After on that refusal. */
  readonly retryAfter?: number
}

export function createFrontDoor (options: FrontDoorOptions): RequestListener {
  const { forwarder, bodyLimit, app, closing } = options
  return function frontDoor (req, res) {
    if (closing?.() === true) {
      // A request on a kept-alive connection after SIGTERM: nothing is forwarded. 503 with
      // Retry-After is what Java retries even for a commit, and `connection: close` sends the
      // retry to a new connection, so to an instance that is not going away.
      req.resume()
      return answer(res, new GateError(ERRORS.SHUTTING_DOWN, 'iceguard is shutting down; the request was not forwarded and can be retried',
        { headers: { 'retry-after': String(options.retryAfter ?? 1), connection: 'close' } }))
    }
    const route = routeOf(req)
    switch (route.kind) {
      case 'local':
        return app(req, res)
      case 'refused':
        req.resume()
        return answer(res, new GateError(ERRORS.BAD_REQUEST, route.message ?? 'Cannot forward the request'))
      case 'passthrough':
        req.url = route.target
        return forwarder.forward(req, res)
    }
    req.url = route.target
    if ((route.kind !== 'update-table' && route.kind !== 'transaction') || hasContentCoding(req.headers['content-encoding'])) {
      return app(req, res)
    }
    readBody(req, req.headers['content-length'], bodyLimit, (err, body) => {
      if (err !== null || body === undefined) {
        if (err instanceof GateError && !res.headersSent) answer(res, err)
        else res.destroy()
        return
      }
      if (!needsGate(body)) return forwarder.forward(req, res, { commit: true, body })
      setPreReadBody(req, body)
      app(req, res)
    })
  }
}

function answer (res: ServerResponse, err: GateError): void {
  const out = renderError(err)
  res.writeHead(out.statusCode, out.headers)
  res.end(out.body)
}
