/**
 * The first code every request meets: a plain `node:http` handler in front of Fastify.
 *
 * Requests the proxy has no reason to look at (every `/v1/**` call except `GET /v1/config` and the
 * writes the gate may need to see) go straight to the streaming forwarder: no routing tables,
 * hooks, logging or body parsing on that path. Table and transaction commits are read and scanned
 * here; a commit with only data actions (`commit-scan.ts`) is forwarded from the same bytes, the
 * rest go to Fastify with the body already read. Everything else (health, admin, docs,
 * `/v1/config`, creates, views) is Fastify's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ERRORS, renderError, GateError } from '../errors.js'
import type { StreamForwarder } from '../upstream/stream-forward.js'
import { classifyRequest, PASSTHROUGH } from './classify.js'
import { hasContentCoding, needsGate } from './commit-scan.js'
import { unsafePathReason } from './path-safety.js'
import { readBody } from './read-body.js'
import { setPreReadBody, setRoute } from './request-state.js'

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void

export interface FrontDoorOptions {
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
      const out = renderError(new GateError(ERRORS.SHUTTING_DOWN, 'iceguard is shutting down; the request was not forwarded and can be retried',
        { headers: { 'retry-after': String(options.retryAfter ?? 1), connection: 'close' } }))
      res.writeHead(out.statusCode, out.headers)
      res.end(out.body)
      return
    }
    const url = req.url
    // Only origin-form `/v1/...` targets are forwarded; anything else is Fastify's to answer,
    // including dot-segment tricks (refused there with an ErrorModel, see path-safety.ts).
    if (url === undefined || !url.startsWith('/v1/') || unsafePathReason(url) !== undefined) return app(req, res)
    const method = req.method
    if (method === 'GET') {
      // `/v1/config` needs its `overrides.uri` rewritten; a cheap test keeps other GETs lean.
      if (url.includes('config') && classifyRequest(method, url).kind === 'config') return app(req, res)
      // Tagged so the request counter need not classify the path again (see request-state.ts).
      setRoute(req, PASSTHROUGH)
      return forwarder.forward(req, res)
    }
    if (method !== 'POST') {
      setRoute(req, PASSTHROUGH)
      return forwarder.forward(req, res)
    }

    const route = classifyRequest(method, url)
    setRoute(req, route)
    if (route.kind === 'passthrough') return forwarder.forward(req, res)
    if ((route.kind !== 'update-table' && route.kind !== 'transaction') || hasContentCoding(req.headers['content-encoding'])) {
      return app(req, res)
    }
    readBody(req, req.headers['content-length'], bodyLimit, (err, body) => {
      if (err !== null || body === undefined) {
        if (err instanceof GateError && !res.headersSent) {
          const out = renderError(err)
          res.writeHead(out.statusCode, out.headers)
          res.end(out.body)
        } else {
          res.destroy()
        }
        return
      }
      if (!needsGate(body)) return forwarder.forward(req, res, { commit: true, body })
      setPreReadBody(req, body)
      app(req, res)
    })
  }
}
