/**
 * Big upstream answers read and relayed as the pieces they arrive in (src/upstream/answer-body.ts,
 * src/upstream/lane/pool-client.ts, src/json/parse-commit-body.ts `decodeUtf8`): a schema commit
 * is judged against a base of about 1.5 MB that comes with Content-Length or chunked in odd-sized
 * chunks, full of multi-byte UTF-8 that reads and chunks cut through; the commit's own answer,
 * as big and framed either way, reaches the client byte for byte (64-bit ids and all), with the
 * length it has. On every transport.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import { startProxy } from '../helpers/index.js'
import { startCatalog } from '../helpers/catalog.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, BIG_ID, type Meta } from '../helpers/gate-fixtures.js'
import { onEveryTransport } from '../helpers/transports.js'

const TABLE_PATH = '/v1/namespaces/db/tables/t'
/** Characters of one, two, three and four bytes in UTF-8. */
const TEXT = 'aé€𝄞'

type Framing = 'length' | 'chunked'

interface Upstream {
  url: string
  framing: Framing
  /** What the upstream answered to the last POST. */
  lastCommitAnswer: Buffer | undefined
  posts: number
}

/** Writes `body` as `framing` says, in pieces of 1 to 9,000 odd bytes (chunk sizes too). */
async function send (res: ServerResponse, body: Buffer, framing: Framing): Promise<void> {
  res.writeHead(200, framing === 'length'
    ? { 'content-type': 'application/json', 'content-length': String(body.length) }
    : { 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
  let at = 0
  for (let i = 0; at < body.length; i++) {
    const piece = body.subarray(at, at + 1 + (i * 7919) % 9000)
    at += piece.length
    if (!res.write(piece)) await new Promise(resolve => res.once('drain', resolve))
  }
  res.end()
}

/** A catalog answering the table's loadTable with `base` and every commit with `commitAnswer`. */
async function startUpstream (t: Test, base: Buffer, commitAnswer: Buffer): Promise<Upstream> {
  const state: Upstream = { url: '', framing: 'length', lastCommitAnswer: undefined, posts: 0 }
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/v1/config') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end('{"defaults":{},"overrides":{}}')
        return
      }
      if (req.method === 'POST') {
        state.posts++
        state.lastCommitAnswer = commitAnswer
        void send(res, commitAnswer, state.framing)
        return
      }
      void send(res, base, state.framing)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

function post (url: string, body: string): Promise<{ status: number, headers: http.IncomingHttpHeaders, body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The table's metadata with a property of `TEXT` `times` times (10 bytes each). */
function withText (meta: Meta, times: number): Meta {
  const properties = (meta as unknown as { properties?: Record<string, string> }).properties
  return { ...meta, properties: { ...properties, 'x.text': TEXT.repeat(times) } } as Meta
}

onEveryTransport(t, t => {
  t.test('big answers in pieces', async t => {
    const catalog = await startCatalog(t)
    const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
    await ice.createNamespace({ namespace: ['db'] })
    await createFixtureTable(ice, 't', 2)
    const meta = await loadMeta(catalog.url, 'db', 't')
    const base = Buffer.from(JSON.stringify({ 'metadata-location': 's3://x', metadata: withText(meta, 150_000) }))
    // The commit's answer: the metadata after it, with a 64-bit id the client must get exactly.
    const commitAnswer = Buffer.from(JSON.stringify({ 'metadata-location': 's3://y', metadata: withText(meta, 200_000) })
      .replace('"s3://y"', `"s3://y","x-id":${BIG_ID}`))
    t.ok(base.length > 1_400_000 && commitAnswer.length > 1_900_000, 'answers of more than a megabyte')
    const up = await startUpstream(t, base, commitAnswer)
    const proxy = await startProxy(t, { upstream: up.url, policy: 'builtin:spec' })

    const s = cloneSchema(meta)
    s.fields.push({ id: meta['last-column-id'] + 1, name: 'added', required: false, type: 'string' })
    const commit = JSON.stringify(clientShapes.java(meta, s, 'db', 't'))
    for (const framing of ['length', 'chunked'] as const) {
      up.framing = framing
      const before = up.posts
      const res = await post(proxy.url + TABLE_PATH, commit)
      t.equal(res.status, 200, `${framing}: the commit was judged against the base and forwarded`)
      t.equal(up.posts - before, 1, `${framing}: forwarded once`)
      t.ok(res.body.equals(commitAnswer), `${framing}: the client got the upstream's answer byte for byte`)
      t.equal(res.headers['content-length'], String(commitAnswer.length), `${framing}: with its length`)
      t.ok(res.body.includes(`"x-id":${BIG_ID}`), `${framing}: the 64-bit id as it was`)
    }

    // A base whose bytes are not UTF-8 (a sequence cut short, deep inside, framed either way) is
    // unreadable: nothing is forwarded.
    const broken = Buffer.from(base)
    broken[broken.indexOf('€', 900_000)] = 0x61
    const badUp = await startUpstream(t, broken, commitAnswer)
    const badProxy = await startProxy(t, { upstream: badUp.url, policy: 'builtin:spec' })
    for (const framing of ['length', 'chunked'] as const) {
      badUp.framing = framing
      const res = await post(badProxy.url + TABLE_PATH, commit)
      t.equal(res.status, 503, `${framing}: an unreadable base is not judged`)
      t.match(res.body.toString(), /not valid UTF-8/, `${framing}: the message says why`)
      t.equal(badUp.posts, 0, `${framing}: nothing forwarded`)
    }
  })
})
