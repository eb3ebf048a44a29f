/**
 * The Iceberg REST surface as Fastify sees it. In production the front door
 * (src/edge/front-door.ts) streams pass-through calls and refuses what the triage refuses
 * (src/edge/classify.ts) before Fastify is involved, so these routes mostly serve `/v1/config` and
 * the writes; the catch-all also keeps every `/v1/**` call correct when requests arrive another
 * way (`app.inject`): the same triage, the same refusals, the same canonical target (Fastify's
 * `rewriteUrl`, src/main/app.ts).
 *
 * Bodies: the content-type parser reads only writes (bounded by --body-limit, any content type,
 * bytes kept as received); for any other call the body stream is left untouched for the forwarder.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
// Adds `hide` to route schemas: these routes mirror the upstream's API, not iceguard's own.
import type {} from '@fastify/swagger'
import { WRITE_KINDS } from '../../src/edge/classify.js'
import { readBody } from '../../src/edge/read-body.js'
import { ERRORS, GateError } from '../../src/errors.js'
import { preReadBody, routeOf } from '../../src/edge/request-state.js'
import { serveConfig } from './config.js'
import { handleWrite } from './write.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of a write's body, as received. */
    rawBody: Buffer | null
  }
}

export default async function iceberg (app: FastifyInstance): Promise<void> {
  const bodyLimit = app.config.bodyLimit
  app.decorateRequest('rawBody', null)
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', function (request: FastifyRequest, payload, done) {
    if (!WRITE_KINDS.has(routeOf(request.raw).kind)) {
      // Left unread: the pass-through forwarder streams it.
      done(null, undefined)
      return
    }
    const pre = preReadBody(request.raw)
    if (pre !== undefined) {
      done(null, pre)
      return
    }
    readBody(payload, request.headers['content-length'], bodyLimit, (err, body) => done(err, body))
  })

  // Before any body is read or byte forwarded: what the triage refuses is answered here.
  app.addHook('onRequest', async (request) => {
    const route = routeOf(request.raw)
    if (route.kind === 'refused') throw new GateError(ERRORS.BAD_REQUEST, route.message ?? 'Cannot forward the request')
  })

  app.get('/v1/config', { schema: { hide: true } }, serveConfig)

  app.all('/v1/*', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const route = routeOf(request.raw)
    // Not an Iceberg REST target once classified (never forwarded): iceguard's own 404.
    if (route.kind === 'local') throw new GateError(ERRORS.NOT_FOUND, `No route for ${request.method} ${request.url.split('?')[0] ?? '/'}`)
    if (route.kind === 'config') return serveConfig(request, reply)
    if (WRITE_KINDS.has(route.kind)) {
      const body = Buffer.isBuffer(request.body) ? request.body : preReadBody(request.raw) ?? Buffer.alloc(0)
      request.rawBody = body
      return handleWrite(request, reply, route, body)
    }
    reply.hijack()
    app.upstream.forwarder.forward(request.raw, reply.raw)
    return reply
  })
}
