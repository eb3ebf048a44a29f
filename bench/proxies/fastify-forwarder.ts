/**
 * Reference: the "stock" Fastify forwarder, built the way @fastify/http-proxy (reply-from) does
 * it — a catch-all route, the request body passed through as a stream by a catch-all content
 * type parser, an undici pool request, and the upstream body handed to `reply.send()` as a
 * stream. Logger off, as in production benchmarks. Not a product: a yardstick for iceguard.
 *
 *   node --import tsx bench/proxies/fastify-forwarder.ts --port 0 --upstream http://127.0.0.1:N
 */
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { Pool } from 'undici'
import { dropHopByHop } from './hop-by-hop.js'

const { values: args } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } } })
if (args.upstream === undefined) throw new Error('--upstream is required')
const pool = new Pool(args.upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 })

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024, keepAliveTimeout: 120_000 })
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', (_req, payload, done) => done(null, payload))
app.all('/*', async (request, reply) => {
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
  const res = await pool.request({
    method: request.method as 'GET',
    path: request.url,
    headers: dropHopByHop(request.headers),
    body: hasBody ? request.raw : null
  })
  reply.code(res.statusCode).headers(dropHopByHop(res.headers))
  return reply.send(res.body)
})
await app.listen({ port: Number(args.port), host: '127.0.0.1' })
const address = app.server.address()
process.stdout.write(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }) + '\n')

const close = (): void => {
  app.close().finally(() => process.exit(0))
  setTimeout(() => process.exit(0), 1000).unref()
}
process.on('SIGTERM', close)
process.on('SIGINT', close)
