/**
 * What the front door learned about a raw request, handed on to the Fastify side without
 * classifying or reading the body twice.
 */
import type { IncomingMessage } from 'node:http'
import { classifyRequest, type ClassifiedRequest } from './classify.js'

const kRoute = Symbol('iceguard.route')
const kBody = Symbol('iceguard.body')
const kJudged = Symbol('iceguard.judged')

interface Tagged {
  [kRoute]?: ClassifiedRequest
  [kBody]?: Buffer
  [kJudged]?: boolean
}

/**
 * The request's classification, computed once per request from the target as received (before
 * the front door or Fastify's `rewriteUrl` replaces `req.url` with the canonical target).
 */
export function routeOf (req: IncomingMessage): ClassifiedRequest {
  const tagged = req as IncomingMessage & Tagged
  tagged[kRoute] ??= classifyRequest(req.method ?? 'GET', req.url ?? '/', carriesBody(req))
  return tagged[kRoute]
}

/** Whether the request has a body: a Content-Length above 0, or any Transfer-Encoding. */
function carriesBody (req: IncomingMessage): boolean {
  const h = req.headers
  const length = h['content-length']
  return h['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0)
}

/**
 * The target to hand on: the canonical one for Iceberg REST calls (what the gate judged is what
 * the upstream routes), the one received otherwise.
 */
export function canonicalUrl (req: IncomingMessage): string {
  const route = routeOf(req)
  return route.kind === 'local' || route.kind === 'refused' ? req.url ?? '/' : route.target
}

/** A body the front door already read (the stream is consumed). */
export function preReadBody (req: IncomingMessage): Buffer | undefined {
  return (req as IncomingMessage & Tagged)[kBody]
}

export function setPreReadBody (req: IncomingMessage, body: Buffer): void {
  (req as IncomingMessage & Tagged)[kBody] = body
}

/** Marks the request as handed to the gate (its answer is timed as a `gated-commit`). */
export function markJudged (req: IncomingMessage): void {
  (req as IncomingMessage & Tagged)[kJudged] = true
}

export function wasJudged (req: IncomingMessage): boolean {
  return (req as IncomingMessage & Tagged)[kJudged] === true
}
