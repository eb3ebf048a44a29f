/**
 * The fast lane's request-head reader, in-process (no HTTP): what finding and parsing the head of
 * a typical request costs, the way `ClientConnection.readHead` does it (find the blank line, decode
 * latin1, parse). The heads are shaped like PyIceberg's (requests) and iceberg-js's (fetch): a
 * table load and a data commit with about ten fields each, a bearer token among them.
 *
 *   node --import tsx bench/head-parts.ts
 *
 * Figures are CPU µs per call (process.cpuUsage), the best of several rounds; compare rows of one
 * run with each other, or one row across two builds run back to back.
 */
import { bestCpuPerCall } from './lib/best-cpu.js'
import { parseRequestHead } from '../src/edge/fast-lane/request-head.js'
import { HEAD_END } from '../src/upstream/lane/response-head.js'

const ROUNDS = 15
const CALLS = 20000
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.' + 'a'.repeat(180)

const common = [
  'Host: 127.0.0.1:8181',
  'User-Agent: PyIceberg/0.9.1',
  'Accept-Encoding: gzip, deflate',
  'Accept: */*',
  'Connection: keep-alive',
  `Authorization: Bearer ${TOKEN}`,
  'X-Iceberg-Access-Delegation: vended-credentials',
  'X-Client-Version: 0.9.1',
  'traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
]
const load = Buffer.from(['GET /v1/namespaces/db/tables/small?snapshots=refs HTTP/1.1', ...common, '', ''].join('\r\n'), 'latin1')
const commit = Buffer.from(['POST /v1/namespaces/db/tables/small HTTP/1.1', ...common, 'Content-Type: application/json', 'Content-Length: 5120', '', ''].join('\r\n') + '{}', 'latin1')

function read (buf: Buffer): unknown {
  const end = buf.indexOf(HEAD_END)
  const head = parseRequestHead(buf.toString('latin1', 0, end))
  if ('bad' in head) throw new Error(head.bad)
  return head
}

const parts: Array<[string, () => unknown]> = [
  [`table load head (${load.length} bytes, ${common.length} fields)`, () => read(load)],
  [`data commit head (${commit.length - 2} bytes, ${common.length + 2} fields)`, () => read(commit)]
]

const best = bestCpuPerCall(parts, ROUNDS, CALLS)
process.stdout.write(`request heads, CPU µs per call (best of ${ROUNDS} rounds of ${CALLS}):\n`)
parts.forEach(([name], k) => process.stdout.write(`  ${(best[k] as number).toFixed(3).padStart(7)}  ${name}\n`))
