/**
 * The fast lane reads request heads before node:http's parser (llhttp) sees them, so it must
 * never be more lenient: the same raw bytes go, over raw sockets, to a plain `http.createServer`
 * (llhttp as Node runs it, defaults) and to iceguard with its fast lane on, and
 *
 * - what iceguard forwards is what llhttp accepted, framed the same way: the upstream (a raw
 *   recorder) sees the same method, target, fields and body bytes as the llhttp server's `req`, in
 *   the same order, and no request llhttp did not accept;
 * - where llhttp refuses (400, 431, or a close), iceguard refuses too: it answers no more requests
 *   than llhttp's handler saw, and its refusal (a 400 or 431 with `connection: close`) is an
 *   ErrorModel;
 * - where llhttp accepts everything, iceguard forwards everything, unless it refused on purpose
 *   for one of the shapes src/edge/fast-lane/request-head.ts lists as refused by design.
 *
 * Every case ends with a follow-up request on the same connection, so a disagreement about where
 * a body ends or whether the connection stays open shows as a follow-up seen by one side only. The
 * follow-up asks to close the connection, or the client half-closes, so every exchange ends
 * without a timer.
 */
import { classifyRequest } from '../../src/edge/classify.js'
import http, { METHODS } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { forwardRequestHeaders } from '../../src/upstream/headers.js'
import { startProxy } from '../helpers/index.js'
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js'

interface Framed {
  readonly method: string
  readonly target: string
  /** Fields as an upstream gets them (hop-by-hop, framing and forwarding fields left out). */
  readonly fields: string[]
  readonly body: string
}

/** llhttp's side: every request the plain server's handler saw whole. */
async function startLlhttp (t: Test): Promise<{ port: number, seen: Framed[] }> {
  const seen: Framed[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({ method: req.method ?? '', target: req.url ?? '', fields: comparable(req.rawHeaders), body: Buffer.concat(chunks).toString('latin1') })
      // No body, so that answers to HEAD read like any other.
      res.setHeader('content-length', '0')
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return { port: (server.address() as AddressInfo).port, seen }
}

const LEFT_OUT = new Set(['content-length', 'transfer-encoding', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'])

/** The fields an upstream should get for `rawHeaders`: what iceguard forwards, less what it adds or re-frames. */
function comparable (rawHeaders: readonly string[]): string[] {
  const out: string[] = []
  const kept = forwardRequestHeaders(rawHeaders, undefined)
  for (let i = 0; i < kept.length; i += 2) if (!LEFT_OUT.has(kept[i] as string)) out.push(`${kept[i] as string}: ${kept[i + 1] as string}`)
  return out
}

/**
 * Writes `bytes` (in pieces of `piece` bytes, a turn of the event loop apart, when `piece` > 0;
 * then half-closes, with `end`) and returns everything received until the server closes.
 */
function exchange (port: number, bytes: Buffer, end: boolean, piece = 0): Promise<string> {
  return new Promise((resolve) => {
    const write = (at: number): void => {
      const to = piece > 0 ? Math.min(bytes.length, at + piece) : bytes.length
      if (sock.destroyed) return
      if (to < bytes.length) {
        sock.write(bytes.subarray(at, to))
        setImmediate(() => write(to))
      } else if (end) sock.end(bytes.subarray(at))
      else sock.write(bytes.subarray(at))
    }
    const sock = net.connect(port, '127.0.0.1', () => write(0))
    let raw = ''
    sock.on('data', (c: Buffer) => { raw += c.toString('latin1') })
    sock.on('error', () => {})
    sock.on('close', () => resolve(raw))
  })
}

interface Answer { status: number, head: string, body: string }

/** Splits answers (interim 1xx skipped; Content-Length, chunked, or to the close). */
function answers (raw: string, methods: readonly string[] = []): Answer[] {
  const out: Answer[] = []
  let rest = raw
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n')
    if (end === -1) break
    const head = rest.slice(0, end)
    rest = rest.slice(end + 4)
    const status = Number(head.slice(9, 12))
    if (status < 200) continue
    const len = /\r\ncontent-length: *(\d+)/i.exec(head)
    let body = ''
    // The answer to a HEAD has no body, whatever its Content-Length says; but a refusal of a
    // request line it could not read carries one (its method is not to be trusted then).
    if (methods[out.length] === 'HEAD' && (rest === '' || rest.startsWith('HTTP/1.1 '))) {
      // nothing to read
    } else if (len !== null) {
      body = rest.slice(0, Number(len[1]))
      rest = rest.slice(Number(len[1]))
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (let size = -1; size !== 0 && rest !== '';) {
        const eol = rest.indexOf('\r\n')
        size = parseInt(rest.slice(0, eol), 16) || 0
        body += rest.slice(eol + 2, eol + 2 + size)
        rest = rest.slice(eol + 2 + size + 2)
      }
    } else {
      body = rest
      rest = ''
    }
    out.push({ status, head, body })
  }
  return out
}

function errorCode (body: string): unknown {
  try {
    return (JSON.parse(body) as { error?: { code?: unknown } }).error?.code
  } catch {
    return undefined
  }
}

/** A refusal of the request: 400 or 431, and the connection closed after it (not a route's own 400). */
const refusal = (a: Answer): boolean => (a.status === 400 || a.status === 431) && /\r\nconnection: close/i.test(a.head)

/**
 * Refusals of the fast lane where llhttp accepts, on purpose (request-head.ts): a request line with
 * doubled spaces or no version, HTTP versions other than 1.0 and 1.1, Content-Length over 15 digits,
 * and heads over the size limit counted in raw bytes (llhttp counts names, values and the target).
 */
const BY_DESIGN = /Malformed request line|Unsupported HTTP version|Invalid Content-Length|Request headers are larger/

/**
 * What the cases covered: both served everything and framed it alike (`compared`); llhttp refused
 * or closed before the follow-up (`llStopped`); iceguard refused by design (`byDesign`) or answered
 * itself without forwarding (`notForwarded`); the triage refused a request llhttp framed, by design
 * (deny by default, src/edge/classify.ts: `triage`).
 */
interface Tally { compared: number, llStopped: number, byDesign: number, notForwarded: number, triage: number }

/** Sends `bytes` (with `id` in every target) to both servers; returns the disagreements found. */
async function differ (ll: { port: number, seen: Framed[] }, iceguard: number, up: RawUpstream, id: string, bytes: Buffer, tally: Tally, piece = 0): Promise<string[]> {
  const mine = (r: { target: string }): boolean => r.target.includes(id)
  const llFrom = ll.seen.length
  const upFrom = up.requests.length
  const llRaw = await exchange(ll.port, bytes, true, piece)
  // Every request llhttp's handler saw in this case (`*` and the like carry no id).
  const accepted = ll.seen.slice(llFrom)
  const llAnswers = answers(llRaw, accepted.map(r => r.method))
  // llhttp served everything when the follow-up reached its handler and nothing was refused
  // (node:http's own 400 for a missing Host comes before its handler, and closes the connection).
  const llStopped = !accepted.some(r => r.target.endsWith(`${id}/next`)) || llAnswers.some(a => a.status >= 400)
  // The follow-up asks to close: where llhttp served it, iceguard must close after it too. Where
  // llhttp did not, the client half-closes, which ends whatever is left waiting. (Only there:
  // node:http drops answers not yet written when it reads a half-close.)
  const igRaw = await exchange(iceguard, bytes, llStopped, piece)
  const forwarded = up.requests.slice(upFrom).filter(mine)
    .map(r => ({ method: r.method, target: r.target, fields: comparable(r.rawHeaders), body: r.body.toString('latin1') }))
  const igAnswers = answers(igRaw, accepted.map(r => r.method))
  const problems: string[] = []

  // Forwarded ⊆ accepted, framed alike. (node:http forwards pipelined requests side by side, so
  // the upstream may see them in another order.)
  // What iceguard forwards is the triage's canonical target (src/edge/request-target.ts), not the
  // one received: compare with that.
  const unmatched = accepted.map(r => JSON.stringify({ ...r, target: classifyRequest(r.method, r.target, r.body.length > 0).target }))
  for (const f of forwarded) {
    const at = unmatched.indexOf(JSON.stringify(f))
    if (at === -1) problems.push(`forwarded what llhttp did not accept as such: ${JSON.stringify(f)}; llhttp accepted ${JSON.stringify(accepted)}`)
    else unmatched.splice(at, 1)
  }
  // A triage refusal (deny by default) answers on the head alone, before llhttp has read the body:
  // nothing was forwarded, so it is not a request served.
  // (The answer to a HEAD shows no body: an empty 400 is one too.)
  const triaged = (a: Answer): boolean => a.status === 400 && (a.body.includes('nothing was forwarded') || a.body === '')
  const igServed = igAnswers.filter(a => !refusal(a) && !triaged(a))
  if (igServed.length > accepted.length) problems.push(`answered ${igServed.length} requests, llhttp accepted ${accepted.length}`)
  const igRefusal = igAnswers.find(refusal)
  if (igRefusal !== undefined) {
    // node:http's own missing-Host answer has no body; every other refusal is an ErrorModel.
    if (igRefusal.body !== '' && errorCode(igRefusal.body) !== igRefusal.status) problems.push(`a refusal without an ErrorModel: ${igRefusal.body}`)
    if (igAnswers.indexOf(igRefusal) !== igAnswers.length - 1) problems.push('answers after a refusal')
  }
  if (llStopped) {
    tally.llStopped++
  } else if (igRefusal !== undefined && /Malformed HTTP request|larger than/.test(igRefusal.body)) {
    if (BY_DESIGN.test(igRefusal.body)) tally.byDesign++
    else problems.push(`refused what llhttp accepted: ${igRefusal.body}`)
  } else if (accepted.some(r => classifyRequest(r.method, r.target, r.body.length > 0).kind === 'refused')) {
    // Refused by the triage, as it must be; the follow-up is still served unless the refusal closed.
    const answered = igServed.length + igAnswers.filter(triaged).length
    if (answered < accepted.length && igRefusal === undefined) problems.push(`answered ${answered} of the ${accepted.length} requests llhttp framed, and closed`)
    tally.triage++
  } else if (igServed.length < accepted.length) {
    problems.push(`answered ${igServed.length} of the ${accepted.length} requests llhttp served, and closed`)
  } else if (forwarded.length === accepted.length) {
    tally.compared++
  } else {
    // Answered by iceguard itself (a route or path it does not forward): allowed, and counted.
    tally.notForwarded++
  }
  return problems
}

const HOST = 'Host: x\r\n'
const next = (id: string): string => `GET /v1/namespaces/${id}/next HTTP/1.1\r\n${HOST}Connection: close\r\n\r\n`
/** Characters to try in targets and field values: every control, DEL, some of obs-text, and the punctuation that matters. */
const PROBE_BYTES = [...Array.from({ length: 0x21 }, (_, i) => i), 0x7f, 0x80, 0x9f, 0xa0, 0xc3, 0xff,
  ...Array.from('#?"\\{}|^`[]<>\'%;:@!$&()*+,=~', c => c.charCodeAt(0))]

/** Hand-picked heads, `{id}` standing for the case's own target segment. */
const HAND_PICKED: string[] = [
  // Method tokens: llhttp knows a fixed list, in exact case.
  ...METHODS.filter(m => m !== 'CONNECT').map(m => `${m} /v1/namespaces/{id}/m HTTP/1.1\r\n${HOST}\r\n`),
  ...['get', 'post', 'Get', 'FOO', 'GETS', 'PRI', 'DESCRIBE', 'M-SEARCHX', 'G\x00T'].map(m => `${m} /v1/namespaces/{id}/m HTTP/1.1\r\n${HOST}\r\n`),
  `CONNECT /v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  // Targets.
  ...PROBE_BYTES.map(b => `GET /v1/namespaces/{id}/a${String.fromCharCode(b)}b HTTP/1.1\r\n${HOST}\r\n`),
  ...PROBE_BYTES.map(b => `GET /v1/namespaces/{id}?q=a${String.fromCharCode(b)}b HTTP/1.1\r\n${HOST}\r\n`),
  `GET http://x/v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  `OPTIONS * HTTP/1.1\r\n${HOST}\r\n`,
  `GET /v1/namespaces/{id}#frag HTTP/1.1\r\n${HOST}\r\n`,
  // Request lines.
  ...['HTTP/1.0', 'HTTP/0.9', 'HTTP/2.0', 'HTTP/1.2', 'HTTP/2', 'http/1.1', 'HTTP/1.1 ', 'HTTP/1.10', ''].map(v => `GET /v1/namespaces/{id} ${v}\r\n${HOST}\r\n`),
  `GET  /v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  `GET\t/v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  ` GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  `\r\n\r\nGET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  `\nGET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}\r\n`,
  // Line ends: bare LF and bare CR anywhere.
  `GET /v1/namespaces/{id} HTTP/1.1\n${HOST}\r\n`,
  'GET /v1/namespaces/{id} HTTP/1.1\r\nHost: x\n\r\n',
  'GET /v1/namespaces/{id} HTTP/1.1\r\nHost: x\r\n\n',
  'GET /v1/namespaces/{id} HTTP/1.1\nHost: x\n\n',
  'GET /v1/namespaces/{id} HTTP/1.1\rHost: x\r\n\r\n',
  'GET /v1/namespaces/{id} HTTP/1.1\r\nHost: x\r\r\n',
  'GET /v1/namespaces/{id} HTTP/1.1\r\nHost: x\r\n\rX',
  // Field lines.
  ...PROBE_BYTES.map(b => `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-Probe: a${String.fromCharCode(b)}b\r\n\r\n`),
  ...PROBE_BYTES.map(b => `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-Pr${String.fromCharCode(b)}be: v\r\n\r\n`),
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-A: 1\r\n folded\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-A: 1\r\n\tfolded\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n X-A: 1\r\n${HOST}\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-A : 1\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}: 1\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-A\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-A:\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-A: \t a  b \t\r\n\r\n`,
  'GET /v1/namespaces/{id} HTTP/1.1\r\n\r\n',
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Host: y\r\n\r\n`,
  // Framing.
  ...['3', '003', '3 ', '3, 3', '+3', '-3', '', '0x3', '3 3', '1234567890123456', '2', '4'].map(v => `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Content-Length: ${v}\r\n\r\nabc`),
  `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc`,
  `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd`,
  ...['chunked', 'CHUNKED', 'gzip, chunked', 'chunked, gzip', 'gzip', 'identity', ' chunked '].map(v => `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Transfer-Encoding: ${v}\r\n\r\n3\r\nabc\r\n0\r\n\r\n`),
  `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
  `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
  `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Content-Length: 2\r\n\r\nab`,
  `HEAD /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Content-Length: 2\r\n\r\nab`,
  `POST /v1/namespaces?{id} HTTP/1.1\r\n${HOST}Expect: 100-continue\r\nContent-Length: 3\r\n\r\nabc`,
  // Keep-alive.
  ...['close', 'Close', 'keep-alive, close', ',close,', ' close ', 'closed', 'x-close', 'close;x', '"close"', 'a close', 'close x', 'upgrade', 'keep-alive, X-Hop']
    .map(v => `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Connection: ${v}\r\nX-Hop: 1\r\n\r\n`),
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Connection: foo\r\nConnection: close\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Proxy-Connection: close\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}Upgrade: websocket\r\nConnection: upgrade\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.0\r\n${HOST}\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.0\r\n${HOST}Connection: keep-alive\r\n\r\n`,
  // Sizes: many small fields (node:http keeps about a thousand), and one large one.
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}${Array.from({ length: 1200 }, (_, i) => `a${i}:${i % 10}\r\n`).join('')}\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}${Array.from({ length: 990 }, (_, i) => `a${i}:${i % 10}\r\n`).join('')}\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(16_300)}\r\n\r\n`,
  `GET /v1/namespaces/{id} HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(17_000)}\r\n\r\n`
]

t.test('hand-picked heads: the fast lane refuses all llhttp refuses and frames alike what both accept', async t => {
  const ll = await startLlhttp(t)
  const up = await startRawUpstream(t)
  const proxy = await startProxy(t, { upstream: up.url })
  const port = Number(new URL(proxy.url).port)
  const tally: Tally = { compared: 0, llStopped: 0, byDesign: 0, notForwarded: 0, triage: 0 }
  let n = 0
  for (const template of HAND_PICKED) {
    const id = `h${String(++n).padStart(4, '0')}`
    const text = template.replaceAll('{id}', id)
    const problems = await differ(ll, port, up, id, Buffer.from(text + next(id), 'latin1'), tally)
    t.same(problems, [], JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text))
  }
  t.same(up.problems, [], 'the upstream read every request iceguard sent')
  t.ok(tally.compared >= 100 && tally.llStopped >= 100, `both outcomes covered: ${JSON.stringify(tally)}`)
})

/** Line ends: mostly CRLF, sometimes a bare LF or CR. */
const eol = fc.oneof({ weight: 80, arbitrary: fc.constant('\r\n') }, fc.constant('\n'), fc.constant('\r'))
const char = (common: string, weight = 40): fc.Arbitrary<string> => fc.oneof(
  { weight, arbitrary: fc.constantFrom(...common) },
  { weight: 2, arbitrary: fc.constantFrom(...'#?"\\{}|^`[]<>%;: \t') },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map(b => String.fromCharCode(b)) }
)
const method = fc.oneof(
  { weight: 16, arbitrary: fc.constantFrom('GET', 'GET', 'POST', 'HEAD') },
  { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 1, arbitrary: fc.constantFrom('get', 'Post', 'FOO', 'PRI', 'GETS', 'SETUP') },
  { weight: 1, arbitrary: fc.string({ unit: char('GETPOSDL-'), minLength: 1, maxLength: 7 }) }
)
const field = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.string({ unit: char('abcXYZ-_09', 80), minLength: 0, maxLength: 8 }), fc.string({ unit: char('abc XYZ,;=/09', 80), maxLength: 12 })).map(([n, v]) => `x-${n}: ${v}`) },
  { weight: 2, arbitrary: fc.constantFrom('3', '003', ' 3 ', '3, 3', '+3', '', '0x3', '1234567890123456', '2', '4').map(v => `Content-Length: ${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('chunked', 'gzip, chunked', 'chunked, gzip', 'gzip', 'CHUNKED').map(v => `Transfer-Encoding: ${v}`) },
  { weight: 2, arbitrary: fc.constantFrom('close', 'keep-alive', 'Keep-Alive, Close', 'a close', 'close;x', '"close"', ',close,', 'close x', 'upgrade', 'x-hop').map(v => `Connection: ${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('Proxy-Connection: close', 'Expect: 100-continue', 'Upgrade: h2c', 'Host: y', ' folded', '\tfolded', 'X-Sp : 1', 'x-hop: 1') }
)
const head = fc.record({
  method,
  sp1: fc.oneof({ weight: 40, arbitrary: fc.constant(' ') }, fc.constantFrom('  ', '\t')),
  where: fc.constantFrom('path', 'query'),
  segment: fc.string({ unit: char('abcXYZ019-_~.'), maxLength: 8 }),
  sp2: fc.oneof({ weight: 40, arbitrary: fc.constant(' ') }, fc.constantFrom('  ', '\t')),
  version: fc.oneof({ weight: 40, arbitrary: fc.constant('HTTP/1.1') }, fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.2', 'http/1.1', '')),
  host: fc.oneof({ weight: 20, arbitrary: fc.constant(true) }, fc.constant(false)),
  fields: fc.array(fc.tuple(field, eol), { maxLength: 5 }),
  lineEnds: fc.tuple(eol, eol),
  // Behind a request the fast lane serves: the head is then read from bytes kept while it answered.
  behind: fc.boolean(),
  // Sent whole, or in pieces: an unfinished head is judged as it arrives.
  piece: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 40 }))
})

type GeneratedHead = typeof head extends fc.Arbitrary<infer H> ? H : never

function render (h: GeneratedHead, id: string): string {
  const target = h.where === 'path' ? `/v1/namespaces/${id}/${h.segment}` : `/v1/namespaces?id=${id}&q=${h.segment}`
  let text = h.behind ? `GET /v1/namespaces/${id}/before HTTP/1.1\r\n${HOST}\r\n` : ''
  text += `${h.method}${h.sp1}${target}${h.sp2}${h.version}${h.lineEnds[0]}`
  if (h.host) text += HOST
  for (const [line, end] of h.fields) text += line + end
  text += h.lineEnds[1]
  const chunked = h.fields.some(([line]) => /^transfer-encoding/i.test(line))
  const sized = h.fields.some(([line]) => /^content-length/i.test(line))
  return text + (chunked ? '3\r\nabc\r\n0\r\n\r\n' : sized ? 'abc' : '')
}

t.test('generated heads: the fast lane refuses all llhttp refuses and frames alike what both accept', async t => {
  const ll = await startLlhttp(t)
  const up = await startRawUpstream(t)
  const proxy = await startProxy(t, { upstream: up.url })
  const port = Number(new URL(proxy.url).port)
  const tally: Tally = { compared: 0, llStopped: 0, byDesign: 0, notForwarded: 0, triage: 0 }
  let n = 0
  const result = await fc.check(fc.asyncProperty(head, async (h) => {
    const id = `g${String(++n).padStart(4, '0')}`
    const text = render(h, id)
    const problems = await differ(ll, port, up, id, Buffer.from(text + next(id), 'latin1'), tally, h.piece)
    if (problems.length > 0) throw new Error(`${JSON.stringify(text)}: ${problems.join('; ')}`)
  }), { numRuns: 350, includeErrorInReport: true })
  t.notOk(result.failed, fc.defaultReportMessage(result) ?? 'no disagreement')
  t.same(up.problems, [], 'the upstream read every request iceguard sent')
  t.ok(tally.compared >= 40 && tally.llStopped >= 40, `both outcomes covered: ${JSON.stringify(tally)}`)
})
