/**
 * Reference: the bare Node forwarder — node:http and undici's `Pool.stream`, no framework, only
 * hop-by-hop headers dropped. What the runtime alone costs per forwarded request: the floor a
 * Node proxy can reach, which iceguard should approach.
 *
 *   node --import tsx bench/proxies/node-forwarder.ts --port 0 --upstream http://127.0.0.1:N
 */
import http from 'node:http'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'
import { dropHopByHop } from './hop-by-hop.js'

const { values: args } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } } })
if (args.upstream === undefined) throw new Error('--upstream is required')
const pool = new Pool(args.upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 })
const BAD_GATEWAY = JSON.stringify({ error: { message: 'The upstream catalog could not be reached', type: 'BadGatewayException', code: 502 } })

const server = http.createServer({ keepAliveTimeout: 120_000 }, (req, res) => {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
  pool.stream({
    method: (req.method ?? 'GET') as 'GET',
    path: req.url ?? '/',
    headers: dropHopByHop(req.headers),
    body: hasBody ? req : null
  }, ({ statusCode, headers }) => {
    res.writeHead(statusCode, dropHopByHop(headers))
    return res
  }, (err) => {
    if (err === null) return
    if (!res.headersSent) {
      res.writeHead(502, { 'content-type': 'application/json' })
      res.end(BAD_GATEWAY)
    } else {
      res.destroy(err)
    }
  })
})
server.maxRequestsPerSocket = 0
server.listen(Number(args.port), '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 }) + '\n')
})

const close = (): void => {
  server.close()
  server.closeAllConnections()
  pool.close().finally(() => process.exit(0))
  setTimeout(() => process.exit(0), 1000).unref()
}
process.on('SIGTERM', close)
process.on('SIGINT', close)
