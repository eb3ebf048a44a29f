/**
 * What the front door learned about a raw request, handed on to the Fastify side without
 * classifying or reading the body twice.
 */
import type { IncomingMessage } from 'node:http'
import { classifyRequest, type ClassifiedRequest } from './classify.js'

const kRoute = Symbol('iceguard.route')
const kBody = Symbol('iceguard.body')

interface Tagged {
  [kRoute]?: ClassifiedRequest
  [kBody]?: Buffer
}

/** The request's classification, computed once per request. */
export function routeOf (req: IncomingMessage): ClassifiedRequest {
  const tagged = req as IncomingMessage & Tagged
  return tagged[kRoute] ??= classifyRequest(req.method ?? 'GET', req.url ?? '/')
}

export function setRoute (req: IncomingMessage, route: ClassifiedRequest): void {
  (req as IncomingMessage & Tagged)[kRoute] = route
}

/** A body the front door already read (the stream is consumed). */
export function preReadBody (req: IncomingMessage): Buffer | undefined {
  return (req as IncomingMessage & Tagged)[kBody]
}

export function setPreReadBody (req: IncomingMessage, body: Buffer): void {
  (req as IncomingMessage & Tagged)[kBody] = body
}
