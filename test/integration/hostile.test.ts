/**
 * Hostile and malformed input on the gated routes and the admin dry run: every bad body is a 4xx
 * ErrorModel whose `code` is the status, nothing reaches the upstream that should not, the
 * process neither crashes nor has its prototypes polluted, and path tricks never reach anything
 * but the path the client named, under the upstream's base path.
 */
import http from 'node:http'
import net from 'node:net'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { startProxy, startRecordingUpstream, type RecordingUpstream, type RunningProxy } from '../helpers/index.js'
import { fixtureMeta, schemaCommitFor, TABLE } from '../helpers/fault-upstream.js'
import { onEveryTransport } from '../helpers/transports.js'

interface Reply { status: number, headers: Record<string, string | string[] | undefined>, text: string }

/** Sends `url` as written: the path is not normalised on the way (WHATWG URL parsing would resolve dot segments). */
async function send (url: string, opts: { method?: string, body?: string | Buffer, headers?: Record<string, string> } = {}): Promise<Reply> {
  const target = /^(http:\/\/[^/]+)(\/.*)$/.exec(url)
  if (target !== null && /\/\.|%2e|\\/i.test(target[2] ?? '')) return await sendRaw(target[1] ?? '', target[2] ?? '/', opts)
  const res = await request(url, {
    method: (opts.method ?? 'POST') as 'POST',
    body: opts.body,
    headers: { 'content-type': 'application/json', ...opts.headers },
    headersTimeout: 20_000,
    bodyTimeout: 20_000
  })
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() }
}

function sendRaw (origin: string, path: string, opts: { method?: string, body?: string | Buffer, headers?: Record<string, string> }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin)
    const req = http.request({ host: hostname, port, path, method: opts.method ?? 'POST', agent: false, headers: { 'content-type': 'application/json', ...opts.headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }))
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

/** A 4xx answer that is an Iceberg ErrorModel with `code` equal to the status. */
function isClientError (t: Test, r: Reply, what: string, status?: number): void {
  if (status !== undefined) t.equal(r.status, status, `${what}: ${status}`)
  else t.ok(r.status >= 400 && r.status < 500, `${what}: a 4xx (got ${r.status})`)
  let body: { error?: { code?: unknown, type?: unknown, message?: unknown } } = {}
  try { body = JSON.parse(r.text) as typeof body } catch {}
  t.equal(body.error?.code, r.status, `${what}: ErrorModel code = status`)
  t.equal(typeof body.error?.type, 'string', `${what}: ErrorModel type`)
  t.ok(typeof body.error?.message === 'string' && body.error.message.length > 0, `${what}: a message`)
}

/** An upstream that serves the fixture table for any GET and accepts any POST. */
async function world (t: Test, extra: Record<string, string> = {}): Promise<{ up: RecordingUpstream, proxy: RunningProxy }> {
  const up = await startRecordingUpstream(t, (req, res) => {
    const body = req.method === 'GET'
      ? JSON.stringify({ 'metadata-location': 's3://w/db/t/metadata/00000.json', metadata: fixtureMeta() })
      : '{}'
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
    res.end(body)
  })
  const proxy = await startProxy(t, { upstream: `${up.url}/api/catalog`, policy: 'builtin:spec', 'body-limit': '8MiB', ...extra })
  return { up, proxy }
}

const posts = (up: RecordingUpstream): number => up.requests.filter(r => r.method === 'POST').length

onEveryTransport(t, t => {
  t.test('malformed bodies on the gated routes and the admin dry run', async t => {
    const { up, proxy } = await world(t)
    const commit = `${proxy.url}${TABLE}`
    const routes = {
      commit,
      transaction: `${proxy.url}/v1/transactions/commit`,
      create: `${proxy.url}/v1/namespaces/db/tables`,
      validate: `${proxy.url}/admin/v1/validate`
    }
    /** The same bad JSON wherever it can sit: the whole body, or the commit inside a dry run. */
    const everywhere = async (what: string, text: string | Buffer, status = 400): Promise<void> => {
      for (const [route, url] of Object.entries(routes)) {
        isClientError(t, await send(url, { body: text }), `${what} → ${route}`, status)
      }
      const inside = Buffer.concat([Buffer.from('{"table":{"namespace":["db"],"name":"t"},"request":'), Buffer.from(text), Buffer.from('}')])
      isClientError(t, await send(routes.validate, { body: inside }), `${what} inside validate`, status)
    }

    await everywhere('not JSON', '{"updates": [')
    await everywhere('trailing garbage', '{"updates":[]} x')
    for (const notObject of ['[]', '"updates"', '42', 'null', 'true']) await everywhere(`JSON ${notObject}`, notObject)
    await everywhere('a duplicate key', '{"updates":[{"action":"add-schema","action":"set-properties","schema":{}}],"requirements":[]}')
    await everywhere('invalid UTF-8 in a key', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]))
    await everywhere('invalid UTF-8 in a value', Buffer.concat([Buffer.from('{"updates":[{"action":"set-properties","updates":{"k":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}]}')]))

    // Nested thousands deep: a bounded scan answers before any recursive parser runs.
    const deep = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n)
    for (const [route, url] of Object.entries(routes)) {
      const r = await send(url, { body: `{"updates":[{"action":"add-schema","schema":${deep(20_000)}}]}` })
      isClientError(t, r, `20,000 levels deep → ${route}`, 400)
      t.match(r.text, /nesting deeper than/, `${route}: the message names the problem`)
    }
    const arrays = '['.repeat(50_000) + ']'.repeat(50_000)
    isClientError(t, await send(commit, { body: `{"updates":${arrays}}` }), '50,000 nested arrays', 400)

    t.same(up.requests.filter(r => r.method === 'POST').map(r => r.body.toString().slice(0, 80)), [], 'none of it reached the upstream')
  })

  t.test('prototype keys are refused and pollute nothing', async t => {
    const { up, proxy } = await world(t)
    const bodies = [
      '{"__proto__":{"polluted":"yes"},"updates":[{"action":"add-schema","schema":{"type":"struct","fields":[]}}]}',
      '{"updates":[{"action":"add-schema","__proto__":{"polluted":"yes"},"schema":{"type":"struct","fields":[]}}]}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"updates":[{"action":"add-schema","schema":{"type":"struct","fields":[]}}]}',
      '{"updates":[{"action":"add-schema","schema":{"type":"struct","fields":[{"id":99,"name":"x","required":false,"type":"string","__proto__":{"polluted":"yes"}}]}}]}',
      '{"updates":[{"action":"set-properties","updates":{"__proto__":{"polluted":"yes"}}},{"action":"add-schema","schema":{"type":"struct","fields":[]}}]}',
      '{"\\u005f_proto__":{"polluted":"yes"},"updates":[{"action":"add-schema","schema":{"type":"struct","fields":[]}}]}'
    ]
    for (const [i, body] of bodies.entries()) {
      isClientError(t, await send(`${proxy.url}${TABLE}`, { body }), `prototype key #${i}`, 400)
      isClientError(t, await send(`${proxy.url}/v1/transactions/commit`, { body }), `prototype key #${i} (transaction)`, 400)
      isClientError(t, await send(`${proxy.url}/admin/v1/validate`, { body: `{"table":{"namespace":["db"],"name":"t"},"request":${body}}` }), `prototype key #${i} (validate)`, 400)
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')
    t.equal((Object.prototype as Record<string, unknown>).polluted, undefined)
    t.equal(posts(up), 0, 'nothing forwarded')
  })

  t.test('wrong types in every field of a schema commit: a 4xx ErrorModel or a judged answer, never a 5xx', async t => {
    const { up, proxy } = await world(t)
    const base = schemaCommitFor(fixtureMeta()) as Record<string, unknown>
    const wrongs: unknown[] = [null, 0, -1, 1.5, 'x', true, [], {}, [null], 2 ** 53 + 1]
    // Every path into the body (objects and arrays), replaced by every wrong value in turn.
    const paths: Array<Array<string | number>> = []
    const walk = (v: unknown, path: Array<string | number>): void => {
      if (path.length > 0) paths.push(path)
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]))
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...path, k])
    }
    walk(base, [])
    let judged = 0
    let refused = 0
    for (const path of paths) {
      for (const wrong of wrongs) {
        const copy = structuredClone(base) as Record<string | number, unknown>
        let at: Record<string | number, unknown> = copy
        for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>
        at[path.at(-1)!] = wrong
        const r = await send(`${proxy.url}${TABLE}`, { body: JSON.stringify(copy) })
        if (r.status >= 500) t.fail(`${path.join('.')} = ${JSON.stringify(wrong)}: ${r.status} ${r.text}`)
        else if (r.status >= 400) { refused++; if (refused % 50 === 0) isClientError(t, r, `${path.join('.')} = ${JSON.stringify(wrong)}`) } else judged++
      }
    }
    t.ok(refused > paths.length, `most wrong types are refused (${refused} refused, ${judged} let through as harmless)`)
    t.pass(`${paths.length * wrongs.length} variants answered without a 5xx`)
    // A commit the gate let through had no wrong type where a schema is read: every forwarded body parsed.
    for (const r of up.requests.filter(x => x.method === 'POST')) t.doesNotThrow(() => JSON.parse(r.body.toString()))
  })

  t.test('unknown actions and requirements', async t => {
    const { up, proxy } = await world(t)
    for (const body of [
      { updates: [{ action: 'drop-everything' }] },
      { updates: [{ action: 'ADD-SCHEMA', schema: { type: 'struct', fields: 'x' } }] },
      { requirements: [{ type: 'assert-nothing' }], updates: [{ action: 'add-schema', schema: { type: 'struct', fields: [] } }] },
      { updates: [{ action: 7 }] },
      { updates: [{ action: 'set-properties', updates: {} }, { action: 'add-sort-order', 'sort-order': 'x' }] }
    ]) {
      const r = await send(`${proxy.url}${TABLE}`, { body: JSON.stringify(body) })
      isClientError(t, r, `refused: ${JSON.stringify(body).slice(0, 60)}`, 400)
    }
    t.equal(posts(up), 0, 'nothing forwarded')
    // An update with no action at all cannot change a schema: it is the upstream's to refuse.
    const bare = '{"updates":[{}]}'
    await send(`${proxy.url}${TABLE}`, { body: bare })
    t.equal(up.requests.at(-1)?.body.toString(), bare, 'an action-less update is forwarded byte for byte')
  })

  t.test('big but legal-looking bodies: 100,000 fields, huge strings, bodies over the limit', async t => {
    const { up, proxy } = await world(t, { 'body-limit': '8MiB' })
    const meta = fixtureMeta()
    const many = schemaCommitFor(meta, Array.from({ length: 100_000 }, (_, i) => ({ id: 1000 + i, name: `c${i}`, required: false, type: 'string' })))
    const text = JSON.stringify(many)
    t.ok(text.length < 8 * 1024 * 1024, 'fits the limit')
    const r = await send(`${proxy.url}${TABLE}`, { body: text })
    t.ok(r.status === 200 || (r.status >= 400 && r.status < 500), `100,000 new fields: judged (${r.status})`)
    if (r.status !== 200) isClientError(t, r, '100,000 fields')

    const longName = schemaCommitFor(meta, [{ id: 900, name: 'n'.repeat(3 * 1024 * 1024), required: false, type: 'string' }])
    const huge = await send(`${proxy.url}${TABLE}`, { body: JSON.stringify(longName) })
    t.ok(huge.status === 200 || (huge.status >= 400 && huge.status < 500), `a 3 MiB column name: judged (${huge.status})`)
    t.ok(huge.text.length < 64 * 1024, 'the answer does not echo the huge name back whole')

    const before = posts(up)
    const over = JSON.stringify(schemaCommitFor(meta, [{ id: 900, name: 'n'.repeat(9 * 1024 * 1024), required: false, type: 'string' }]))
    // The admin route straight, not through the `config first` relay (helpers/transports.ts):
    // node:http answers its 413 and resets the connection while the body still arrives, and a
    // relay loses the answer to that reset.
    for (const [route, url] of [['commit', `${proxy.url}${TABLE}`], ['data commit', `${proxy.url}${TABLE}`], ['create', `${proxy.url}/v1/namespaces/db/tables`], ['validate', `${proxy.direct}/admin/v1/validate`]] as const) {
      const body = route === 'data commit' ? `{"updates":[{"action":"set-properties","updates":{"k":"${'v'.repeat(9 * 1024 * 1024)}"}}]}` : over
      const res = await send(url, { body })
      isClientError(t, res, `${route}: over the body limit`, 413)
    }
    // Chunked, with no Content-Length to refuse up front (node:http's, straight: see above).
    const chunked = await new Promise<Reply>((resolve, reject) => {
      const sock = net.connect(Number(new URL(proxy.direct).port), '127.0.0.1', () => {
        sock.write(`POST ${TABLE} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`)
        const chunk = 'x'.repeat(64 * 1024)
        for (let i = 0; i < 144; i++) sock.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
        sock.write('0\r\n\r\n')
      })
      let raw = ''
      sock.on('data', (c: Buffer) => { raw += c.toString('latin1') })
      sock.on('error', () => {})
      sock.on('close', () => {
        const [head = '', ...rest] = raw.split('\r\n\r\n')
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0)
        if (status === 0) reject(new Error(`no answer: ${raw.slice(0, 200)}`))
        resolve({ status, headers: {}, text: rest.join('\r\n\r\n') })
      })
    })
    isClientError(t, chunked, 'chunked body over the limit', 413)
    t.equal(posts(up), before, 'nothing over the limit was forwarded')
  })

  t.test('path tricks never leave the path the client named', async t => {
    const { up, proxy } = await world(t)
    const tricks = [
      '/v1/namespaces/db/tables/../../../../admin',
      '/v1/../../admin/secret',
      '/v1/namespaces/%2e%2e/%2E%2E/config',
      '/v1/namespaces/db/tables/t/%2e%2e%2f%2e%2e%2fadmin',
      '/v1/namespaces/a%2F..%2F..%2Fadmin/tables/t',
      '/v1/namespaces/%252e%252e/%252e%252e/admin',
      '/v1/namespaces/..;x=1/tables/t',
      '/v1/namespaces/..%5c..%5cadmin/tables/t',
      '/v1/namespaces/db/./tables/t',
      '/v1/x/../config'
    ]
    for (const path of tricks) {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const r = await send(`${proxy.url}${path}`, { method, body: method === 'POST' ? '{"updates":[{"action":"set-properties","updates":{}}]}' : undefined })
        isClientError(t, r, `${method} ${path}`, 400)
      }
    }
    t.equal(up.requests.length, 0, 'not one trick reached the upstream')

    // What a client may legitimately send is forwarded verbatim, under the base path and nowhere else.
    const fine = [
      '/v1/namespaces/db%1Fnested%20ns/tables/t',
      '/v1/namespaces/a%2Fb/tables/t',
      '/v1/namespaces/db/tables/t.v1',
      '/v1/namespaces/db/tables/...',
      '/v1/namespaces/db/tables/t?snapshots=refs&x=/../..'
    ]
    for (const path of fine) {
      const r = await send(`${proxy.url}${path}`, { method: 'GET' })
      t.equal(r.status, 200, `GET ${path} forwarded`)
      t.equal(up.requests.at(-1)?.url, `/api/catalog${path}`, `GET ${path} arrived as sent, under the base path`)
    }
  })

  t.test('transaction identifiers cannot steer the base load off the table path', async t => {
    const { up, proxy } = await world(t)
    const meta = fixtureMeta()
    const change = schemaCommitFor(meta) as Record<string, unknown>
    for (const identifier of [
      { namespace: ['db'], name: '..' },
      { namespace: ['..', '..'], name: 'admin' },
      { namespace: ['db'], name: '.' }
    ]) {
      const before = up.requests.length
      const r = await send(`${proxy.url}/v1/transactions/commit`, { body: JSON.stringify({ 'table-changes': [{ ...change, identifier }] }) })
      isClientError(t, r, `identifier ${JSON.stringify(identifier)}`, 400)
      t.equal(up.requests.length, before, 'no base load and no commit sent for it')
    }
  })

  t.test('oversized headers: 431 or a clean close, never a crash', async t => {
    const { up, proxy } = await world(t)
    const port = Number(new URL(proxy.url).port)
    const rawExchange = (head: string): Promise<string> => new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write(head))
      let raw = ''
      sock.on('data', (c: Buffer) => { raw += c.toString('latin1') })
      sock.on('error', () => {})
      sock.on('close', () => resolve(raw))
    })
    const big = 'a'.repeat(64 * 1024)
    for (const path of [TABLE, '/admin/v1/rules', '/healthz']) {
      const raw = await rawExchange(`GET ${path} HTTP/1.1\r\nhost: x\r\nx-big: ${big}\r\n\r\n`)
      if (raw === '') t.pass(`${path}: closed cleanly`)
      else {
        t.match(raw, /^HTTP\/1\.1 431 /, `${path}: 431`)
        const body = raw.split('\r\n\r\n')[1] ?? ''
        t.same(JSON.parse(body).error.code, 431, `${path}: an ErrorModel with code 431`)
      }
    }
    // Many headers, each small.
    const many = Array.from({ length: 3000 }, (_, i) => `x-h${i}: v`).join('\r\n')
    const raw = await rawExchange(`GET ${TABLE} HTTP/1.1\r\nhost: x\r\n${many}\r\n\r\n`)
    t.ok(raw === '' || /^HTTP\/1\.1 (431|400) /.test(raw), '3000 headers: refused or closed')
    const health = await send(`${proxy.url}/healthz`, { method: 'GET' })
    t.equal(health.status, 200, 'the proxy still serves')
    t.equal(up.requests.length, 0, 'nothing forwarded')
  })
})
