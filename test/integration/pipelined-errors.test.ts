/**
 * A malformed request pipelined behind a commit, on every transport, on a fresh connection and on
 * one that began with `GET /v1/config` (as PyIceberg's session and iceberg-js's fetch begin
 * theirs): the client gets the commit's real answer first, then the 400, and the
 * upstream gets the one commit. After a request that asked to close the connection, the bytes that
 * follow are not read as a request at all: the answer, then the close.
 */
import net from 'node:net'
import t, { type Test } from 'tap'
import { startProxy, startRecordingUpstream, type RecordingUpstream } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'

const COMMIT_BODY = '{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":3055729675574597004}}]}'
const commit = (extra = ''): string => `POST /v1/namespaces/db/tables/t HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${extra}content-length: ${COMMIT_BODY.length}\r\n\r\n${COMMIT_BODY}`
const CONFIG = 'GET /v1/config HTTP/1.1\r\nhost: x\r\n\r\n'

const TRANSPORTS = [
  ['a fresh connection', ''],
  ['a connection that began with GET /v1/config', CONFIG]
] as const

/** Writes `data` on one connection (not half-closed) and collects everything until the proxy closes it. */
function exchange (port: number, data: string): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(data))
    let raw = ''
    sock.on('data', (c: Buffer) => { raw += c.toString('latin1') })
    sock.on('error', () => {})
    sock.on('close', () => resolve(raw))
  })
}

/** Splits answers framed by Content-Length. */
function answers (raw: string): Array<{ status: number, head: string, body: string }> {
  const out: Array<{ status: number, head: string, body: string }> = []
  let rest = raw
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n')
    const head = rest.slice(0, end)
    const len = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0)
    out.push({ status: Number(head.slice(9, 12)), head, body: rest.slice(end + 4, end + 4 + len) })
    rest = rest.slice(end + 4 + len)
  }
  return out
}

async function world (t: Test): Promise<{ up: RecordingUpstream, port: number }> {
  const up = await startRecordingUpstream(t, (req, res) => {
    const body = req.url.startsWith('/v1/config')
      ? '{"defaults":{},"overrides":{}}'
      : JSON.stringify({ committed: req.method === 'POST', url: req.url })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  })
  const proxy = await startProxy(t, { upstream: up.url })
  return { up, port: Number(new URL(proxy.url).port) }
}

const commits = (up: RecordingUpstream): number => up.requests.filter(r => r.method === 'POST').length

onEveryTransport(t, t => {
  for (const [transport, first] of TRANSPORTS) {
    const before = first === '' ? [] : [200]

    t.test(`${transport}: a commit, then garbage on the same connection: the commit's answer, then the 400`, async t => {
      const { up, port } = await world(t)
      for (const garbage of ['GARBAGE\r\n\r\n', 'GARBAGE', 'post /v1/namespaces HTTP/1.1\r\nhost: x\r\n\r\n', 'GET /v1/namespaces HTTP/1.1\nhost: x\n\n']) {
        const from = commits(up)
        const got = answers(await exchange(port, first + commit() + garbage))
        t.same(got.map(a => a.status), [...before, 200, 400], `${JSON.stringify(garbage)}: every answer in order, the 400 last`)
        t.same(JSON.parse(got.at(-2)?.body ?? '{}'), { committed: true, url: '/v1/namespaces/db/tables/t' }, 'the commit\'s own answer, from the upstream')
        const refusal = got.at(-1)
        t.match(refusal?.head, /\r\nconnection: close/i)
        t.match(JSON.parse(refusal?.body ?? '{}'), { error: { code: 400, type: 'BadRequestException', message: /Malformed HTTP request/ } })
        t.equal(commits(up) - from, 1, 'the upstream got the one commit')
      }
    })

    t.test(`${transport}: after a commit that asked to close, the bytes behind it are not a request`, async t => {
      const { up, port } = await world(t)
      for (const after of ['GET /v1/namespaces/after HTTP/1.1\r\nhost: x\r\n\r\n', 'GARBAGE\r\n\r\n']) {
        const from = commits(up)
        const got = answers(await exchange(port, first + commit('connection: close\r\n') + after))
        t.same(got.map(a => a.status), [...before, 200], `${JSON.stringify(after)}: the commit's answer, then the close`)
        t.match(got.at(-1)?.head, /\r\nconnection: close/i)
        t.same(JSON.parse(got.at(-1)?.body ?? '{}'), { committed: true, url: '/v1/namespaces/db/tables/t' })
        t.equal(commits(up) - from, 1, 'the upstream got the one commit')
      }
      t.notOk(up.requests.some(r => r.url === '/v1/namespaces/after'), 'nothing after the close was forwarded')
    })
  }

  t.test('a body whose chunked framing breaks is refused at once, not waited on', async t => {
  // The broken request's own answer never starts (the upstream answers only a whole request), so
  // there is nothing to wait for: the 400 follows the answers before it.
    const { up, port } = await world(t)
    const broken = 'POST /v1/namespaces HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n'
    for (const [first, before] of [['', []], [CONFIG, [200]]] as const) {
      const got = answers(await exchange(port, first + broken))
      t.same(got.map(a => a.status), [...before, 400], `${first === '' ? 'first on its connection' : 'after GET /v1/config'}: a 400`)
      t.match(JSON.parse(got.at(-1)?.body ?? '{}'), { error: { code: 400, type: 'BadRequestException' } }, 'an ErrorModel')
    }
    t.notOk(up.requests.some(r => r.method === 'POST'), 'the broken request never reached the upstream whole')
  })
})
