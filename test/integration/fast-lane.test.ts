/**
 * The fast lane (src/edge/fast-lane/): its request-head reader refuses what a careful proxy must
 * (request smuggling shapes), its response reader and chunked scanner find where an answer ends
 * however the bytes are split, and, end to end on raw sockets: pipelined requests are answered in
 * order, kept-alive connections to both sides are reused, and a connection carrying a request the
 * fast lane does not forward is handed to node:http and Fastify with every byte intact.
 */
import { EventEmitter } from 'node:events'
import http, { METHODS } from 'node:http'
import net from 'node:net'
import t from 'tap'
import { ChunkedScanner } from '../../src/upstream/lane/chunked-scanner.js'
import { ClientConnection, type FastLaneContext } from '../../src/edge/fast-lane/client-connection.js'
import type { UpstreamConnection, UpstreamPool } from '../../src/upstream/lane/upstream-pool.js'
import { HeadProgress, parseRequestHead, unfinishedHeadProblem, type RequestHead } from '../../src/edge/fast-lane/request-head.js'
import { parseResponseHead, type ResponseHead } from '../../src/upstream/lane/response-head.js'
import { startProxy, startRecordingUpstream } from '../helpers/index.js'

const BIG_ID = '3055729675574597004'

function head (text: string): RequestHead {
  const h = parseRequestHead(text)
  if ('bad' in h) throw new Error(`refused: ${h.bad}`)
  return h
}

function bad (text: string): string | undefined {
  const h = parseRequestHead(text)
  return 'bad' in h ? h.bad : undefined
}

function response (text: string, noBody = false): ResponseHead {
  const r = parseResponseHead(text, noBody)
  if ('invalid' in r) throw new Error(`invalid: ${r.invalid}`)
  return r
}

/** Writes `data` on one connection and collects everything until the proxy closes it (or `until` matches). */
function exchange (port: number, data: string | Buffer, until?: (raw: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(data))
    let raw = ''
    sock.on('data', (c: Buffer) => {
      raw += c.toString('latin1')
      if (until?.(raw) === true) sock.destroy()
    })
    sock.on('error', () => {})
    sock.on('close', () => resolve(raw))
  })
}

/** Splits raw HTTP/1.1 answers (Content-Length or chunked framing) into status and body; `headAt`: the index of an answer to HEAD. */
function answers (raw: string, headAt = -1): Array<{ status: number, head: string, body: string }> {
  const out: Array<{ status: number, head: string, body: string }> = []
  let rest = raw
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) break
    const h = rest.slice(0, end)
    rest = rest.slice(end + 4)
    let body = ''
    const len = /\r\ncontent-length: (\d+)/i.exec(h)
    if (out.length === headAt) {
      // The answer to a HEAD request: its length describes a body that is not sent.
    } else if (len !== null) {
      body = rest.slice(0, Number(len[1]))
      rest = rest.slice(Number(len[1]))
    } else if (/\r\ntransfer-encoding: chunked/i.test(h)) {
      for (;;) {
        const eol = rest.indexOf('\r\n')
        const size = parseInt(rest.slice(0, eol), 16)
        // Garbled framing ends the parse (the test then fails on what is missing).
        if (eol === -1 || Number.isNaN(size)) return out
        rest = rest.slice(eol + 2)
        if (size === 0) {
          rest = rest.slice(rest.indexOf('\r\n') + 2)
          break
        }
        body += rest.slice(0, size)
        rest = rest.slice(size + 2)
      }
    }
    out.push({ status: Number(h.slice(9, 12)), head: h, body })
  }
  return out
}

const portOf = (url: string): number => Number(new URL(url).port)

t.test('request heads', async t => {
  const h = head('POST /v1/namespaces/a%1Fb/tables/t?x=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\nX-Odd:  v\t \r\nConnection: keep-alive, Close')
  t.same([h.method, h.target, h.minor, h.contentLength, h.close, h.hosts, h.special], ['POST', '/v1/namespaces/a%1Fb/tables/t?x=1', 1, 12, true, 1, false])
  t.same(h.rawHeaders, ['Host', 'x', 'Content-Length', '12', 'X-Odd', 'v', 'Connection', 'keep-alive, Close'], 'values lose surrounding whitespace only')
  t.equal(head('GET / HTTP/1.1\r\nhost: x\r\nx: caf\xe9').rawHeaders[3], 'caf\xe9', 'obs-text kept byte for byte')
  t.equal(head('GET / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked').transferEncoding, true)
  for (const special of ['expect: 100-continue', 'upgrade: websocket', 'connection: Upgrade']) {
    t.equal(head(`GET / HTTP/1.1\r\nhost: x\r\n${special}`).special, true, `${special}: left to node:http`)
  }
  t.equal(head('GET / HTTP/1.0\r\nhost: x').minor, 0)

  const refused: Array<[string, RegExp]> = [
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked', /Transfer-Encoding and Content-Length/],
    ['POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ncontent-length: 5', /Transfer-Encoding and Content-Length/],
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 6', /Content-Length appears more than once/],
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ncontent-length: 5', /Content-Length appears more than once/],
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 5, 5', /Invalid Content-Length/],
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: +5', /Invalid Content-Length/],
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0x5', /Invalid Content-Length/],
    ['POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1234567890123456', /Invalid Content-Length/],
    ['GET / HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n  folded', /folding/],
    ['GET / HTTP/1.1\r\nhost: x\r\n\tfolded', /folding/],
    ['GET / HTTP/2.0\r\nhost: x', /HTTP version/],
    ['GET / HTTP/1.1 \r\nhost: x', /request line/],
    ['GET  / HTTP/1.1\r\nhost: x', /request line/],
    ['GET /a b HTTP/1.1\r\nhost: x', /request line/],
    ['G(T / HTTP/1.1\r\nhost: x', /method/],
    ['GET /\x7f HTTP/1.1\r\nhost: x', /target/],
    ['GET / HTTP/1.1\r\nhost: x\r\nx-a: 1\ntransfer-encoding: chunked', /header value/],
    ['GET / HTTP/1.1\r\nhost: x\r\nx-a: 1\rx', /header value/],
    ['GET / HTTP/1.1\r\nhost: x\r\ntransfer-encoding : chunked', /header name/],
    ['GET / HTTP/1.1\r\nhost: x\r\nno colon', /header line/],
    ['GET / HTTP/1.1\r\n: empty name', /header line/],
    // What llhttp refuses that an earlier reader let through: its method list in exact case, and
    // raw bytes >= 0x80 in the target.
    ['get / HTTP/1.1\r\nhost: x', /method/],
    ['FOO / HTTP/1.1\r\nhost: x', /method/],
    ['PRI * HTTP/2.0', /method/],
    ['DESCRIBE / HTTP/1.1\r\nhost: x', /method/],
    ['GET /caf\xe9 HTTP/1.1\r\nhost: x', /target/],
    ['GET /a\x00 HTTP/1.1\r\nhost: x', /target/],
    ['GET / HTTP/1.1\r\nhost: x\r\nx-a: 1\x7f', /header value/],
    ['GET / HTTP/1.1\r\nhost: x\r\nx-a: \x01', /header value/]
  ]
  for (const [text, why] of refused) t.match(bad(text), why, JSON.stringify(text))

  for (const method of METHODS.filter(m => m !== 'CONNECT')) t.equal(head(`${method} /v1/x HTTP/1.1\r\nhost: x`).method, method, `${method}: one of llhttp's methods`)
  // llhttp takes every visible ASCII character in a target, these included (routing them is another matter).
  t.equal(head('GET /a#b\\c"d{e}|^`[]<> HTTP/1.1\r\nhost: x').target, '/a#b\\c"d{e}|^`[]<>')
  for (const target of ['*', 'http://x/v1/namespaces', 'x:1']) t.equal(head(`GET ${target} HTTP/1.1\r\nhost: x`).special, true, `${target}: not origin-form, node:http's`)
  t.equal(head('CONNECT /v1/x HTTP/1.1\r\nhost: x').special, true, 'CONNECT: node:http\'s')
  const many = Array.from({ length: 999 }, (_, i) => `x${i}: v`).join('\r\n')
  t.equal(head(`GET / HTTP/1.1\r\nhost: x\r\n${many}`).special, false, 'a thousand fields: the fast lane\'s')
  t.equal(head(`GET / HTTP/1.1\r\nhost: x\r\n${many}\r\nx: v`).special, true, 'more fields than node:http keeps: node:http\'s')
  // Connection options as llhttp reads them: comma-separated words, any case, spaces and tabs around.
  for (const [value, close] of [['close', true], ['Keep-Alive, CLOSE', true], [',close,', true], [' \tclose\t', true], ['closed', false],
    ['close;x', false], ['"close"', false], ['a close', false], ['close x', false]] as const) {
    t.equal(head(`GET / HTTP/1.1\r\nhost: x\r\nconnection: ${value}`).close, close, `Connection: ${value}`)
  }
  t.equal(head('GET / HTTP/1.1\r\nhost: x\r\nproxy-connection: close').close, true, 'Proxy-Connection counts as Connection')
  t.equal(head('GET / HTTP/1.1\r\nhost: x\r\nconnection: foo\r\nconnection: close').close, true, 'a second Connection field counts too')
})

t.test('unfinished request heads: refused as soon as llhttp would refuse them', async t => {
  const check = (...pieces: string[]): string | undefined => {
    const progress = new HeadProgress()
    let buf = Buffer.alloc(0)
    for (const piece of pieces) {
      buf = Buffer.concat([buf, Buffer.from(piece, 'latin1')])
      const problem = unfinishedHeadProblem(buf, progress)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  for (const fine of [['G'], ['M-'], ['GET'], ['GET '], ['GET /v1/x?a=#'], ['GET /v1 HTTP/1.'], ['GET / HTTP/1.1\r'],
    ['GET / HTTP/1.1\r\nHost: x\r\nX-A'], ['GET / HTTP/1.1\r\nHost: x\r\nX-A:'], ['GET / HTTP/1.1\r\nHost: x\r\nX-A: caf\xe9'],
    ['GET / HTTP/1.1\r\nHost: x\r\n\r'], ['GET / HT', 'TP/1.1\r', '\nHost: x\r\n', 'Content-Length: 1', '\r\n']]) {
    t.equal(check(...fine), undefined, `${JSON.stringify(fine)}: may still turn out well`)
  }
  const refused: Array<[string[], RegExp]> = [
    [['GET / HTTP/1.1\nHost: x\n'], /bare LF/],
    [['GET / HTTP/1.1\r\nHost: x\n'], /bare LF/],
    [['GET / HTTP/1.1\r\nHost: x\r\n\n'], /bare LF/],
    [['GET / HTTP/1.1\r\nHost: x\r', '\r'], /CR is not followed by LF/],
    [['GET / HTTP/1.1\rX'], /CR is not followed by LF/],
    [['GARBAGE'], /method/],
    [['get'], /method/],
    [['FOO /'], /method/],
    [['GET /caf\xe9'], /target/],
    [['GET / HTTP/2'], /HTTP version/],
    [['GET  /'], /request line/],
    [['GET / HTTP/1.1\r\n folded'], /folding/],
    [['GET / HTTP/1.1\r\nHost: x\r\nX A'], /header name/],
    [['GET / HTTP/1.1\r\nHost: x\r\nX-A: \x00'], /header value/],
    [['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n', 'Content-Length: 1\r\n'], /more than once/],
    [['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n'], /Transfer-Encoding and Content-Length/]
  ]
  for (const [pieces, why] of refused) t.match(check(...pieces), why, JSON.stringify(pieces))

  const progress = new HeadProgress()
  t.equal(unfinishedHeadProblem(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nX-A: 1', 'latin1'), progress), undefined)
  t.equal(progress.next, 'GET / HTTP/1.1\r\nHost: x\r\n'.length, 'complete lines are read once: the next read starts after them')
})

t.test('response heads: how the body is delimited and whether the connection is reused', async t => {
  const ok = response('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 42\r\nKeep-Alive: timeout=5')
  t.same([ok.status, ok.framing, ok.length, ok.reusable, ok.keepAliveMs], [200, 'length', 42, true, 5000])
  t.same(ok.rawHeaders, ['Content-Type', 'application/json', 'Content-Length', '42', 'Keep-Alive', 'timeout=5'])
  t.equal(response('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked').framing, 'chunked')
  const both = response('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked')
  t.same([both.framing, both.reusable], ['chunked', false], 'Transfer-Encoding wins over Content-Length, and the socket is not reused')
  const toClose = response('HTTP/1.1 200 OK\r\nContent-Type: text/plain')
  t.same([toClose.framing, toClose.reusable], ['close', false], 'no length: read until close, never reused')
  t.equal(response('HTTP/1.1 200 OK\r\nContent-Length: 9', true).framing, 'none', 'an answer to HEAD has no body')
  t.same([response('HTTP/1.1 200 OK\r\nContent-Length: 0').framing, response('HTTP/1.1 200 OK\r\nContent-Length: 0').reusable], ['none', true], 'an empty body ends with the head')
  for (const status of [204, 304]) t.equal(response(`HTTP/1.1 ${status} X\r\nContent-Length: 9`).framing, 'none', `${status} has no body`)
  t.equal(response('HTTP/1.1 100 Continue').framing, 'none')
  t.equal(response('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1').reusable, false)
  t.equal(response('HTTP/1.0 200 OK\r\nContent-Length: 1').reusable, false, 'HTTP/1.0 closes by default')
  t.equal(response('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1').reusable, true)
  t.equal(response('HTTP/1.1 200').status, 200, 'the reason phrase is optional')
  for (const invalid of ['HTTP/1.1 20 OK', 'HTTP/2 200 OK', 'HTTP/1.1 200 OK\r\nContent-Length: -1', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked', 'HTTP/1.1 200 OK\r\n folded', 'HTTP/1.1 200 OK\r\nno colon']) {
    t.ok('invalid' in parseResponseHead(invalid, false), `invalid: ${JSON.stringify(invalid)}`)
  }
})

t.test('chunked bodies: the end is found wherever the bytes are split', async t => {
  const body = Buffer.from('5\r\nhello\r\n1a;name=value\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\n', 'latin1')
  const next = Buffer.from('HTTP/1.1 200 OK\r\n')
  const whole = Buffer.concat([body, next])
  t.equal(new ChunkedScanner().scan(whole), body.length, 'the end, with bytes of the next message after it')
  t.equal(new ChunkedScanner().scan(Buffer.from('0\r\n\r\n')), 5, 'an empty body')
  // Every split point, and byte by byte.
  for (let cut = 1; cut < body.length; cut++) {
    const s = new ChunkedScanner()
    const first = s.scan(body.subarray(0, cut))
    const second = s.scan(body.subarray(cut))
    if (first !== -1 || second !== body.length - cut) t.fail(`split at ${cut}: ${first}, ${second}`)
  }
  const s = new ChunkedScanner()
  let end = -1
  for (let i = 0; i < body.length && end === -1; i++) end = s.scan(body.subarray(i, i + 1)) === 1 ? i + 1 : -1
  t.equal(end, body.length, 'byte by byte')
  // One scanner follows several bodies in turn (a reused upstream socket).
  const again = new ChunkedScanner()
  t.equal(again.scan(Buffer.from('3\r\nabc\r\n0\r\n\r\n')), 13)
  t.equal(again.scan(Buffer.from('2\r\nde\r\n0\r\n\r\n')), 12)
  for (const malformed of ['x\r\n', '\r\n', '5\r\nhello0\r\n\r\n', '5\r\nhelloXY', '5\nhello', '12345678901234\r\n', '0\r\n\r\x00', '3;a\nabc', '0\r\nx-a: 1\n']) {
    t.equal(new ChunkedScanner().scan(Buffer.from(malformed)), -2, `malformed: ${JSON.stringify(malformed)}`)
  }
})

t.test('smuggling shapes are refused with a 400 ErrorModel and the connection closed; nothing reaches the upstream', async t => {
  const up = await startRecordingUpstream(t)
  const proxy = await startProxy(t, { upstream: up.url })
  const port = portOf(proxy.url)
  const attempts = [
    'POST /v1/namespaces HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/namespaces/smuggled HTTP/1.1\r\nhost: x\r\n\r\n',
    'POST /v1/namespaces HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ncontent-length: 40\r\n\r\n{}GET /v1/namespaces/smuggled HTTP/1.1\r\nhost: x\r\n\r\n',
    'GET /v1/namespaces HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n transfer-encoding: chunked\r\n\r\n',
    'GET /v1/namespaces HTTP/1.1\r\nhost: x\r\nx-a: 1\ntransfer-encoding: chunked\r\n\r\n',
    'GET /v1/namespaces HTTP/9.9\r\nhost: x\r\n\r\n',
    'POST /v1/namespaces HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ncontent-length: 2\r\n\r\n{}',
    'get /v1/namespaces HTTP/1.1\r\nhost: x\r\n\r\n',
    'GET /v1/namespaces/caf\xe9 HTTP/1.1\r\nhost: x\r\n\r\n',
    // Heads that never hold a CRLF CRLF: answered at once, not after the idle timeout (the
    // connection is not half-closed, so only the 400 can end the exchange before that).
    'GET /v1/namespaces HTTP/1.1\nhost: x\n\n',
    'GET /v1/namespaces HTTP/1.1\r\nhost: x\n\n',
    'GET /v1/namespaces HTTP/1.1\r\nhost: x\r\n\n',
    'GARBAGE'
  ]
  for (const attempt of attempts) {
    const raw = await exchange(port, attempt)
    const [a, ...more] = answers(raw)
    t.equal(a?.status, 400, `400 for ${JSON.stringify(attempt.slice(0, 70))}`)
    t.match(a?.head, /\r\nconnection: close/i)
    t.same(JSON.parse(a?.body ?? '{}').error.code, 400, 'an ErrorModel')
    t.equal(more.length, 0, 'nothing after it: the connection was closed')
  }
  const big = await exchange(port, `GET /v1/namespaces HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.match(big, /^HTTP\/1\.1 431 /, 'a head over the size limit: 431')
  t.same(JSON.parse(answers(big)[0]?.body ?? '{}').error.code, 431)
  t.equal(up.requests.length, 0, 'not one request reached the upstream')
})

t.test('requests pipelined before a half-close are all answered, then the connection closes', async t => {
  const up = await startRecordingUpstream(t, (req, res) => {
    const body = JSON.stringify({ url: req.url })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  })
  const proxy = await startProxy(t, { upstream: up.url })
  const raw = await new Promise<string>((resolve) => {
    const sock = net.connect(portOf(proxy.url), '127.0.0.1', () => sock.end(
      'GET /v1/namespaces/a HTTP/1.1\r\nhost: x\r\n\r\nGET /v1/namespaces/b HTTP/1.1\r\nhost: x\r\n\r\nGET /v1/namespaces/c HTTP/1.1\r\nhost: x'))
    let text = ''
    sock.on('data', (c: Buffer) => { text += c.toString('latin1') })
    sock.on('close', () => resolve(text))
  })
  t.same(answers(raw).map(a => JSON.parse(a.body).url), ['/v1/namespaces/a', '/v1/namespaces/b'], 'both whole requests answered, in order')
  t.same(up.requests.map(r => r.url), ['/v1/namespaces/a', '/v1/namespaces/b'], 'the unfinished third was not forwarded')
})

t.test('pipelined requests are answered in order, each forwarded whole', async t => {
  let n = 0
  const ports = new Set<number>()
  const up = await startRecordingUpstream(t, (req, res) => {
    ports.add(res.socket?.remotePort ?? -1)
    const body = JSON.stringify({ n: ++n, method: req.method, url: req.url, body: req.body.toString() })
    // Alternate Content-Length and chunked answers, so the boundaries are both kinds.
    if (n % 2 === 0) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write(body.slice(0, 5))
      res.end(body.slice(5))
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
      res.end(body)
    }
  })
  const proxy = await startProxy(t, { upstream: `${up.url}/base` })
  const commit = `{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID}}}]}`
  const requests = [
    'GET /v1/namespaces/a%1Fb HTTP/1.1\r\nhost: x\r\n\r\n',
    `POST /v1/namespaces/db/tables/t HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${commit.length}\r\n\r\n${commit}`,
    'HEAD /v1/namespaces/db HTTP/1.1\r\nhost: x\r\n\r\n',
    'POST /v1/namespaces HTTP/1.1\r\nhost: x\r\ncontent-length: 16\r\n\r\n{"namespace":[]}',
    'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n',
    'GET /v1/namespaces/after-healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'
  ]
  // All at once, and again split into 7-byte pieces.
  for (const split of [false, true]) {
    const all = requests.join('')
    const raw = await new Promise<string>((resolve) => {
      const sock = net.connect(portOf(proxy.url), '127.0.0.1', () => {
        if (!split) sock.write(all)
        else for (let i = 0; i < all.length; i += 7) sock.write(all.slice(i, i + 7))
      })
      let text = ''
      sock.on('data', (c: Buffer) => { text += c.toString('latin1') })
      sock.on('close', () => resolve(text))
    })
    const got = answers(raw, 2)
    t.same(got.map(a => a.status), [200, 200, 200, 200, 200, 200], `six answers in order (split: ${split})`)
    t.match(JSON.parse(got[0]?.body ?? '{}'), { method: 'GET', url: '/base/v1/namespaces/a%1Fb' })
    t.match(JSON.parse(got[1]?.body ?? '{}'), { method: 'POST', body: commit }, 'the data commit, byte for byte')
    t.equal(got[2]?.body, '', 'HEAD: no body')
    t.match(JSON.parse(got[3]?.body ?? '{}'), { method: 'POST', body: '{"namespace":[]}' })
    t.same(JSON.parse(got[4]?.body ?? '{}'), { status: 'ok' }, 'iceguard\'s own route: Fastify answered on the same connection')
    t.match(JSON.parse(got[5]?.body ?? '{}'), { url: '/base/v1/namespaces/after-healthz' }, 'and the next call was forwarded')
    t.equal(ports.size, 1, 'every call, the one after /healthz included, took the fast lane\'s one pooled upstream connection')
  }
})

t.test('keep-alive both ways: one upstream connection carries sequential requests; chunked and empty answers end exactly', async t => {
  const upstreamPorts: number[] = []
  const up = await startRecordingUpstream(t, (req, res) => {
    upstreamPorts.push(res.socket?.remotePort ?? -1)
    if (req.url.endsWith('/empty')) {
      res.writeHead(200, { 'content-length': '0' })
      res.end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"part":1,')
    setImmediate(() => res.end(`"url":"${req.url}"}`))
  })
  const proxy = await startProxy(t, { upstream: up.url })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const clientPorts: number[] = []
  for (let i = 0; i < 6; i++) {
    const path = i === 2 ? '/v1/namespaces/empty' : `/v1/namespaces/n${i}`
    const body = await new Promise<string>((resolve, reject) => {
      http.get(`${proxy.url}${path}`, { agent }, (res) => {
        clientPorts.push(res.socket.localPort ?? -1)
        let text = ''
        res.on('data', (c: Buffer) => { text += c.toString() })
        res.on('end', () => resolve(text))
      }).on('error', reject)
    })
    if (i === 2) t.equal(body, '', 'an empty answer (Content-Length: 0) ends with its head')
    else t.same(JSON.parse(body), { part: 1, url: path })
  }
  t.equal(new Set(clientPorts).size, 1, 'the client connection was kept alive')
  t.equal(new Set(upstreamPorts).size, 1, 'one pooled upstream connection carried every request')
})

t.test('/v1/config keeps the connection in the fast lane; chunked request bodies reach node:http with their bytes; a gated commit in pieces is judged whole; /metrics counts the fast lane', async t => {
  const ports = new Map<string, number>()
  const up = await startRecordingUpstream(t, (req, res) => {
    ports.set(req.url, res.socket?.remotePort ?? -1)
    const body = req.url.startsWith('/v1/config')
      ? JSON.stringify({ defaults: {}, overrides: { uri: 'http://internal:1' } })
      : JSON.stringify({ got: req.body.toString() })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  })
  const proxy = await startProxy(t, { upstream: up.url })
  const port = portOf(proxy.url)
  const metric = async (): Promise<number> => {
    const text = await (await fetch(`${proxy.url}/metrics`)).text()
    return Number(/iceguard_http_requests_total\{method="GET",route="iceberg:passthrough",status="200"\} (\d+)/.exec(text)?.[1] ?? 0)
  }
  const before = await metric()
  const chunked = 'POST /v1/namespaces HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n'
  const raw = await exchange(port, 'GET /v1/namespaces/x HTTP/1.1\r\nhost: x\r\n\r\n' + 'GET /v1/config HTTP/1.1\r\nhost: x\r\n\r\n' +
    'GET /v1/namespaces/y HTTP/1.1\r\nhost: x\r\n\r\n' + chunked.replace('host: x', 'host: x\r\nconnection: close'))
  const got = answers(raw)
  t.same(got.map(a => a.status), [200, 200, 200, 200])
  t.same(JSON.parse(got[1]?.body ?? '{}').overrides, {}, '/v1/config: overrides.uri removed')
  t.same(JSON.parse(got[3]?.body ?? '{}'), { got: '{"a":1}' }, 'a chunked body, handed over, arrived whole')
  t.equal(await metric(), before + 2, 'both pass-through GETs are counted in /metrics')
  t.equal(ports.get('/v1/namespaces/y'), ports.get('/v1/namespaces/x'), 'the GET after /v1/config took the fast lane\'s pooled upstream connection, as the GET before it')
  t.equal(ports.get('/v1/config'), ports.get('/v1/namespaces/x'), 'and so did /v1/config')

  // A commit whose body arrives in pieces and needs the gate is read whole, then judged (in the
  // fast lane: test/integration/fast-lane-gate.test.ts).
  const schemaCommit = '{"updates":[{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[]}}]}'
  const commit = `POST /v1/namespaces/db/tables/t HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${schemaCommit.length}\r\nconnection: close\r\n\r\n${schemaCommit}`
  const pieces = await new Promise<string>((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      sock.write(commit.slice(0, commit.length - 20))
      setTimeout(() => sock.write(commit.slice(commit.length - 20)), 30)
    })
    let text = ''
    sock.on('data', (c: Buffer) => { text += c.toString('latin1') })
    sock.on('close', () => resolve(text))
  })
  const gated = answers(pieces)[0]
  t.ok(gated !== undefined && gated.status >= 400, `the gate judged it (${gated?.status})`)
  t.same(JSON.parse(gated?.body ?? '{}').error.code, gated?.status, 'with an ErrorModel')
  t.ok(up.requests.some(r => r.method === 'GET' && r.url === '/v1/namespaces/db/tables/t?snapshots=refs'), 'the gate loaded the base table')
  t.notOk(up.requests.some(r => r.method === 'POST' && r.url === '/v1/namespaces/db/tables/t'), 'the schema commit was not forwarded unjudged')
})

t.test('answers held back by a client that does not read arrive intact while other connections keep answering', async t => {
  // Heads and bodies are joined in one reused buffer (client-connection.ts `writeJoined`); a write
  // the kernel cannot take at once must keep its own bytes. Each answer's body is filled with a
  // letter of its own, so bytes from another answer would show. Loopback sockets take about 4 MB
  // unread (tcp_wmem's maximum plus the receive window): the slow connection asks for more.
  const letter = (url: string): string => String.fromCharCode(0x61 + Number(/(\d+)$/.exec(url)?.[1] ?? 0) % 26)
  // Loads: 256 KB (the head goes out joined with the first piece); data commits: 60 KB, held whole, then joined.
  const size = (method: string): number => method === 'GET' ? 256 * 1024 : 60 * 1024
  const up = await startRecordingUpstream(t, (req, res) => {
    const body = JSON.stringify({ url: req.url, method: req.method, fill: letter(req.url).repeat(size(req.method)) })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  })
  const proxy = await startProxy(t, { upstream: up.url })
  const port = portOf(proxy.url)
  const commit = `{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID}}}]}`
  const request = (i: number): string => i % 2 === 0
    ? `GET /v1/namespaces/db/tables/t${i} HTTP/1.1\r\nhost: x\r\n\r\n`
    : `POST /v1/namespaces/db/tables/t${i} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${commit.length}\r\n\r\n${commit}`
  const check = (raw: string, first: number, count: number, who: string): void => {
    const got = answers(raw)
    t.equal(got.length, count, `${who}: ${count} answers`)
    let intact = 0
    got.forEach((a, k) => {
      const i = first + k
      const body = JSON.parse(a.body) as { url: string, method: string, fill: string }
      if (a.status === 200 && body.url === `/v1/namespaces/db/tables/t${i}` && body.fill === letter(body.url).repeat(size(body.method))) intact++
    })
    t.equal(intact, count, `${who}: every answer intact and in order`)
  }

  // Connection A sends 49 requests (about 7.6 MB of answers) and reads nothing for a while.
  const slow = net.connect(port, '127.0.0.1')
  slow.pause()
  await new Promise<void>((resolve) => slow.on('connect', resolve))
  slow.write(Array.from({ length: 48 }, (_, i) => request(i)).join('') + request(48).replace('host: x', 'host: x\r\nconnection: close'))
  await new Promise((resolve) => setTimeout(resolve, 300))
  // Meanwhile connection B is answered normally, through the same join buffer.
  const fast = await exchange(port, Array.from({ length: 12 }, (_, i) => request(100 + i)).join('') + request(112).replace('host: x', 'host: x\r\nconnection: close'))
  check(fast, 100, 13, 'the reading connection')

  const raw = await new Promise<string>((resolve) => {
    let text = ''
    slow.on('data', (c: Buffer) => { text += c.toString('latin1') })
    slow.on('close', () => resolve(text))
    slow.resume()
  })
  check(raw, 0, 49, 'the connection that read late')
})

t.test('a client that pipelines commits and never reads gets no more answers queued than its socket holds', async t => {
  // A commit's answer is held until complete and then written whole, past the upstream's
  // back-pressure; without a wait for 'drain' before the next request, one connection could make
  // iceguard queue every answer of every request it sends.
  const answerBytes = 200 * 1024
  const up = await startRecordingUpstream(t, (req, res) => {
    const body = JSON.stringify({ url: req.url, fill: 'x'.repeat(answerBytes) })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  })
  const proxy = await startProxy(t, { upstream: up.url })
  const commit = `{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":${BIG_ID}}}]}`
  const count = 80 // 16 MB of answers, several times what loopback socket buffers take
  const request = (i: number): string => `POST /v1/namespaces/db/tables/t${i} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${commit.length}\r\n${i === count - 1 ? 'connection: close\r\n' : ''}\r\n${commit}`
  const sock = net.connect(portOf(proxy.url), '127.0.0.1')
  sock.pause()
  await new Promise<void>((resolve) => sock.on('connect', resolve))
  sock.write(Array.from({ length: count }, (_, i) => request(i)).join(''))
  // Wait for the first commit to go upstream, then until no more go (a slow machine only ends the
  // wait early, which can hide a fault but never invent one).
  while (up.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
  let forwarded = up.requests.length
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    if (up.requests.length === forwarded && i > 2) break
    forwarded = up.requests.length
  }
  t.ok(forwarded > 0 && forwarded < count, `while the client reads nothing, only ${forwarded} of ${count} commits went upstream`)
  const raw = await new Promise<string>((resolve) => {
    let text = ''
    sock.on('data', (c: Buffer) => { text += c.toString('latin1') })
    sock.on('close', () => resolve(text))
    sock.resume()
  })
  const got = answers(raw)
  t.equal(got.length, count, 'once it reads, every commit is answered')
  t.ok(got.every((a, i) => a.status === 200 && (JSON.parse(a.body) as { url: string }).url === `/v1/namespaces/db/tables/t${i}`), 'in order, each whole')
  t.equal(up.requests.length, count)
})

t.test('answers that arrive in pieces are relayed byte for byte, held commit answers included', async t => {
  // The upstream sockets read into one reused buffer (upstream-pool.ts): every piece kept for
  // later (a commit's answer is held until complete) must be a copy, or the next read overwrites it.
  const PIECE = 30 * 1024
  const pieces = (url: string): string[] => ['a', 'b', 'c'].map((c, k) => `${k === 0 ? `{"url":"${url}","fill":"` : ''}${c.repeat(PIECE)}${k === 2 ? '"}' : ''}`)
  const up = await startRecordingUpstream(t, (req, res) => {
    const parts = pieces(req.url)
    const chunked = req.url.includes('chunked')
    res.writeHead(200, chunked ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'content-length': String(parts.join('').length) })
    let k = 0
    const next = (): void => {
      const part = parts[k++] as string
      if (k === parts.length) res.end(part)
      else {
        res.write(part)
        setTimeout(next, 15)
      }
    }
    next()
  })
  const proxy = await startProxy(t, { upstream: up.url })
  const commit = `{"updates":[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":${BIG_ID}}]}`
  const paths = ['/v1/namespaces/db/tables/length', '/v1/namespaces/db/tables/chunked']
  const requests = [
    ...paths.map(p => `GET ${p} HTTP/1.1\r\nhost: x\r\n\r\n`),
    ...paths.map(p => `POST ${p} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${commit.length}\r\n\r\n${commit}`)
  ]
  const raw = await exchange(portOf(proxy.url), requests.join('') + 'GET /v1/namespaces/db/tables/last HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')
  const got = answers(raw)
  t.same(got.map(a => a.status), [200, 200, 200, 200, 200])
  const expected = [...paths, ...paths, '/v1/namespaces/db/tables/last'].map(p => pieces(p).join(''))
  got.forEach((a, k) => t.ok(a.body === expected[k], `answer ${k + 1} (${k >= 2 && k < 4 ? 'a held commit answer' : 'a load'}, ${k % 2 === 0 ? 'Content-Length' : 'chunked'}) intact`))
  t.equal(up.requests.filter(r => r.method === 'POST').length, 2, 'both commits took the fast lane to the upstream')
})

t.test('upstream bytes in small pieces: a head split across reads, and a long answer to a client that reads late', async t => {
  // Raw upstream: each piece is written on its own turn of the event loop, so the proxy reads it
  // alone. Pieces must survive the next read into the pool's reused read buffer: a split head is
  // copied, and a piece the client socket does not take at once takes the buffer with it.
  const PIECE = 4096
  const PIECES = 1536 // 6 MB: more than loopback sockets hold unread
  const piece = (k: number): string => `${String(k).padStart(6, '0')}${String.fromCharCode(0x61 + k % 26).repeat(PIECE - 6)}`
  const split = 'hello, split head'
  const upstream = net.createServer((sock) => {
    let text = ''
    sock.on('data', (c: Buffer) => {
      text += c.toString('latin1')
      if (!text.includes('\r\n\r\n')) return
      const parts = text.startsWith('GET /v1/namespaces/db/tables/split')
        ? ['HTTP/1.1 200 OK\r\ncontent-ty', `pe: text/plain\r\ncontent-length: ${split.length}\r\n`, `\r\n${split}`]
        : [`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${PIECE * PIECES}\r\n\r\n`, ...Array.from({ length: PIECES }, (_, k) => piece(k))]
      text = ''
      let k = 0
      const next = (): void => {
        if (k === parts.length) return
        const ok = sock.write(parts[k++] as string)
        if (ok) setImmediate(next)
        else sock.once('drain', next)
      }
      next()
    })
    sock.on('error', () => {})
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => upstream.close(() => resolve())))
  const proxy = await startProxy(t, { upstream: `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}` })
  const port = portOf(proxy.url)

  const twice = await exchange(port, 'GET /v1/namespaces/db/tables/split HTTP/1.1\r\nhost: x\r\n\r\n'.repeat(2) + 'GET /v1/namespaces/db/tables/split HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')
  t.same(answers(twice).map(a => `${a.status} ${a.body}`), Array(3).fill(`200 ${split}`), 'a head in three pieces, three times over one upstream connection')

  const late = net.connect(port, '127.0.0.1')
  late.pause()
  await new Promise<void>((resolve) => late.on('connect', resolve))
  late.write('GET /v1/namespaces/db/tables/long HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')
  await new Promise((resolve) => setTimeout(resolve, 400))
  const raw = await new Promise<string>((resolve) => {
    const parts: Buffer[] = []
    late.on('data', (c: Buffer) => parts.push(c))
    late.on('close', () => resolve(Buffer.concat(parts).toString('latin1')))
    late.resume()
  })
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4)
  t.equal(body.length, PIECE * PIECES, 'the whole answer')
  let bad = -1
  for (let k = 0; k < PIECES && bad === -1; k++) if (body.slice(k * PIECE, (k + 1) * PIECE) !== piece(k)) bad = k
  t.equal(bad, -1, 'every piece intact and in order')
})

/**
 * A socket whose writes the "kernel" takes at once (a copy is kept) or, once `full` is set, leaves
 * queued in the stream (the reference is kept, as net.Socket keeps it until it is sent).
 */
class QueueingSocket extends EventEmitter {
  readonly sent: Buffer[] = []
  full = false
  writableLength = 0
  remoteAddress = '127.0.0.1'
  paused = false
  setTimeout (): this {
    return this
  }

  write (data: Buffer | string): boolean {
    const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data
    if (this.full) {
      this.sent.push(buf)
      this.writableLength += buf.length
    } else {
      this.sent.push(Buffer.from(buf))
    }
    return this.writableLength < 16 * 1024
  }

  pause (): this {
    this.paused = true
    return this
  }

  resume (): this {
    this.paused = false
    return this
  }

  isPaused (): boolean {
    return this.paused
  }

  cork (): void {}
  uncork (): void {}
  destroy (): void {}
  destroySoon (): void {}
  end (): void {}

  text (): string {
    return Buffer.concat(this.sent).toString('latin1')
  }
}

t.test('buffer reuse, step by step: nothing kept past a read or a write is overwritten', async t => {
  // The pool reads every upstream socket into one buffer, reused unless the exchange gave it away
  // (`readBufferTaken`); heads and bodies are joined in one shared buffer (`writeJoined`). Here the
  // reads are driven by hand and every reused buffer is overwritten, so a view kept by mistake
  // shows as wrong bytes.
  const open = (): { client: QueueingSocket, conn: ClientConnection, up: UpstreamConnection, read: (bytes: string) => void } => {
    const client = new QueueingSocket()
    const upSocket = new QueueingSocket()
    const up = { socket: upSocket, user: undefined, readBufferTaken: false } as unknown as UpstreamConnection
    const pool = {
      acquire: (cb: (err: Error | null, conn?: UpstreamConnection) => void) => cb(null, up),
      release: () => {}
    } as unknown as UpstreamPool
    const ctx: FastLaneContext = {
      pool,
      basePath: '',
      upstreamHost: 'up',
      bodyLimit: 1024 * 1024,
      maxHeadBytes: 16 * 1024,
      keepAliveTimeout: 5000,
      headersTimeout: 5000,
      bodyTimeout: 5000,
      retryAfter: 1,
      closing: () => false,
      handOver: () => { throw new Error('unexpected handover') },
      onError: undefined,
      count: () => {},
      observe: () => {},
      gate: undefined,
      local: undefined,
      requestId: () => 'test',
      onGateFault: undefined,
      connections: new Set(),
      client: { request: async () => { throw new Error('unexpected buffered exchange') } },
      publicUrl: undefined
    }
    const conn = new ClientConnection(client as unknown as net.Socket, ctx)
    let readBuffer = Buffer.alloc(64 * 1024)
    const read = (bytes: string): void => {
      if (up.readBufferTaken) {
        readBuffer = Buffer.alloc(64 * 1024)
        up.readBufferTaken = false
      }
      readBuffer.fill(0x23)
      const n = readBuffer.write(bytes, 'latin1')
      conn.onUpstreamData(readBuffer.subarray(0, n))
    }
    return { client, conn, up, read }
  }
  const commit = '{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":1}}]}'
  const post = `POST /v1/namespaces/db/tables/t HTTP/1.1\r\nhost: x\r\ncontent-length: ${commit.length}\r\n\r\n${commit}`
  const bodyOf = (raw: string): string => raw.slice(raw.indexOf('\r\n\r\n') + 4)

  t.test('a commit answer held across reads', async t => {
    const { client, conn, read } = open()
    conn.onData(Buffer.from(post))
    read('HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\naaaa')
    read('bbbb')
    read('cccc')
    t.equal(bodyOf(client.text()), 'aaaabbbbcccc')
  })

  t.test('a head split across reads', async t => {
    const { client, conn, read } = open()
    conn.onData(Buffer.from('GET /v1/namespaces/db HTTP/1.1\r\nhost: x\r\n\r\n'))
    read('HTTP/1.1 200 OK\r\ncontent-le')
    read('ngth: 5\r\n\r\nhello')
    t.match(client.text(), /^HTTP\/1\.1 200 OK\r\n/)
    t.equal(bodyOf(client.text()), 'hello')
  })

  t.test('pieces written to a client that queues them, then another connection joins a head and body', async t => {
    const a = open()
    a.client.full = true
    a.conn.onData(Buffer.from('GET /v1/namespaces/db/tables/a HTTP/1.1\r\nhost: x\r\n\r\n'))
    a.read('HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\nAAAA')
    a.read('BBBB')
    a.read('CCCC')
    const b = open()
    b.conn.onData(Buffer.from('GET /v1/namespaces/db/tables/b HTTP/1.1\r\nhost: x\r\n\r\n'))
    b.read(`HTTP/1.1 200 OK\r\ncontent-length: 4\r\nx-pad: ${'p'.repeat(200)}\r\n\r\nzzzz`)
    t.equal(bodyOf(b.client.text()), 'zzzz', 'the second connection')
    t.equal(bodyOf(a.client.text()), 'AAAABBBBCCCC', 'the queued answer kept its bytes')
    t.match(a.client.text(), /^HTTP\/1\.1 200 OK\r\ncontent-length: 12\r\n/, 'and its head')
  })
})
