/**
 * The requests a real client sends, captured on their way to iceguard, and compared with the
 * checked-in capture under test/fixtures/clients/captured/. A hop between the client and iceguard
 * records each exchange (method, target, the headers that describe the client, the body, the answer's
 * status); `normalise` then replaces what differs from run to run — uuids, timestamps, locations,
 * snapshot ids, file sizes, durations, Spark's application id, the session user as owner — so two runs of the same pinned client compare
 * equal, and a client that starts sending something else does not.
 *
 * `ICEGUARD_CAPTURE_WRITE=1` rewrites the checked-in capture instead of comparing with it.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { Test } from 'tap'
import { request } from 'undici'

export interface Exchange {
  readonly method: string
  readonly target: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: unknown
  readonly status: number
}

export interface CaptureHop {
  readonly url: string
  readonly exchanges: Exchange[]
}

/** Request headers that say who the client is and what it sends (never Authorization). */
const KEPT = ['content-type', 'accept', 'user-agent', 'x-client-version', 'x-iceberg-access-delegation']

export async function startCaptureHop (t: Test, target: () => string): Promise<CaptureHop> {
  const exchanges: Exchange[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks)
        const headers: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v
        const up = await request(`${target()}${req.url ?? '/'}`, { method: req.method as 'GET', headers, body: body.length > 0 ? body : undefined })
        const answer = Buffer.from(await up.body.arrayBuffer())
        const kept: Record<string, string> = {}
        for (const k of KEPT) if (typeof req.headers[k] === 'string') kept[k] = req.headers[k]
        let parsed: unknown
        if (body.length > 0) {
          try { parsed = JSON.parse(body.toString('utf8')) } catch { parsed = body.toString('utf8') }
        }
        exchanges.push({ method: req.method ?? '', target: req.url ?? '', headers: kept, ...(parsed !== undefined && { body: parsed }), status: up.statusCode })
        const out: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !['connection', 'transfer-encoding', 'keep-alive'].includes(k)) out[k] = v
        res.writeHead(up.statusCode, out)
        res.end(answer)
      })().catch(() => { res.destroy() })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.close(() => resolve()); server.closeAllConnections() }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exchanges }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const VARYING_KEYS = /(^|[-.])(timestamp-ms|snapshot-id|sequence-number|uuid|location|manifest-list|metadata-file|app-id|app\.id)$|size$|-ms$|-duration$|-bytes$/

function normaliseValue (key: string, v: unknown, origin: string): unknown {
  if (typeof v === 'string') {
    if (/^<[\w.-]+>$/.test(v)) return v
    if (UUID.test(v)) return '<uuid>'
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(v)) return '<timestamp>'
    if (key === 'owner') return '<owner>'
    if (/^(file|s3|gs|abfss?):/.test(v) || v.startsWith('/')) return '<location>'
    if (VARYING_KEYS.test(key)) return `<${key}>`
    return v.split(origin).join('<iceguard>')
  }
  if (typeof v === 'number' && VARYING_KEYS.test(key)) return `<${key}>`
  if (Array.isArray(v)) return v.map(x => normaliseValue(key, x, origin))
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normaliseValue(k, x, origin)]))
  }
  return v
}

/** The exchanges without what varies between two runs of the same client. */
export function normalise (exchanges: readonly Exchange[], origin: string): Exchange[] {
  return exchanges.map(e => ({
    method: e.method,
    target: e.target,
    headers: Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k, k === 'user-agent' ? v.replace(/\(Java\/[^)]*\)/, '(Java)') : v])),
    ...(e.body !== undefined && { body: normaliseValue('', e.body, origin) }),
    status: e.status
  }))
}

/**
 * Compares a run's exchanges with the checked-in capture (or writes it under ICEGUARD_CAPTURE_WRITE):
 * the same requests in the same order, each with the same method, target, client headers, body
 * and answer status.
 */
export function compareWithCapture (t: Test, file: URL, header: Record<string, unknown>, exchanges: readonly Exchange[]): void {
  if (process.env.ICEGUARD_CAPTURE_WRITE === '1' || !existsSync(file)) {
    writeFileSync(file, JSON.stringify({ ...header, exchanges }, null, 2) + '\n')
    t.comment(`wrote ${file.pathname}`)
    if (process.env.ICEGUARD_CAPTURE_WRITE !== '1') t.fail(`no checked-in capture at ${file.pathname}: written now, check it in`)
    return
  }
  const recorded = (JSON.parse(readFileSync(file, 'utf8')) as { exchanges: Exchange[] }).exchanges
  const line = (e: Exchange): string => `${e.method} ${e.target} -> ${e.status}`
  t.same(exchanges.map(line), recorded.map(line), 'the client sends the same requests, in the same order, and gets the same statuses')
  const n = Math.min(exchanges.length, recorded.length)
  let differing = 0
  for (let i = 0; i < n; i++) {
    const got = exchanges[i] as Exchange
    const want = recorded[i] as Exchange
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      differing++
      t.same(got, want, `exchange ${i + 1} (${line(want)}): headers and body as recorded`)
    }
  }
  t.equal(differing, 0, `every one of ${n} exchanges matches the checked-in capture (set ICEGUARD_CAPTURE_WRITE=1 to re-record after a deliberate pin change)`)
}
