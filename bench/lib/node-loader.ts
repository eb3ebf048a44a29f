/**
 * Fallback load generator for machines without wrk: a closed loop of `connections` concurrent
 * requests over an undici pool, for `seconds`, printing the same BENCH_RESULT line as
 * wrk/request.lua. It costs more CPU per request than wrk, so on a 2-core machine it takes
 * more of the CPU the servers would use: prefer wrk (apt-get install wrk).
 *
 *   node --import tsx bench/lib/node-loader.ts URL SECONDS CONNECTIONS [METHOD] [BODY_FILE]
 *
 * BENCH_OPENER=URL: every connection first carries one GET of URL (answers not counted).
 */
import { readFileSync } from 'node:fs'
import { Pool } from 'undici'

const [url = '', secondsArg = '5', connectionsArg = '32', method = 'GET', bodyFile] = process.argv.slice(2)
const target = new URL(url)
const connections = Number(connectionsArg)
const body = bodyFile !== undefined && bodyFile !== '' ? readFileSync(bodyFile) : null
const headers = body === null ? {} : { 'content-type': 'application/json' }
const pool = new Pool(target.origin, { connections, pipelining: 1 })
const latencies: number[] = []
let bytes = 0
let non2xx = 0
let socketErrors = 0
const opener = process.env.BENCH_OPENER ?? ''
if (opener !== '') {
  // As many at once as there are connections: the pool opens each connection with one of them.
  const path = new URL(opener).pathname
  await Promise.all(Array.from({ length: connections }, async () => {
    const res = await pool.request({ method: 'GET', path })
    await res.body.dump()
    if (res.statusCode !== 200) throw new Error(`the opener ${path} answered ${res.statusCode}`)
  }))
}
const started = process.hrtime.bigint()
const end = Date.now() + Number(secondsArg) * 1000

async function loop (): Promise<void> {
  while (Date.now() < end) {
    const t0 = process.hrtime.bigint()
    try {
      const res = await pool.request({ method: method as 'GET', path: target.pathname + target.search, headers, body })
      for await (const chunk of res.body) bytes += (chunk as Buffer).length
      if (res.statusCode < 200 || res.statusCode > 299) non2xx++
      latencies.push(Number(process.hrtime.bigint() - t0) / 1000)
    } catch {
      socketErrors++
    }
  }
}

await Promise.all(Array.from({ length: connections }, loop))
const durationUs = Number(process.hrtime.bigint() - started) / 1000
await pool.close()
latencies.sort((a, b) => a - b)
const at = (p: number): number => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0)
const mean = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)
process.stdout.write('BENCH_RESULT ' + JSON.stringify({
  requests: latencies.length,
  durationUs: Math.round(durationUs),
  bytes,
  socketErrors,
  non2xx,
  timeouts: 0,
  latencyUs: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: Math.round(latencies.at(-1) ?? 0), mean }
}) + '\n')
