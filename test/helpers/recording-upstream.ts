/**
 * A tiny upstream for proxy tests: records every request exactly as it arrived (raw headers,
 * body bytes) and answers with whatever the test's responder says.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { request } from 'undici'
import { isOpener } from './transports.js'

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly rawHeaders: string[]
  readonly body: Buffer
}

export type Responder = (req: RecordedRequest, res: ServerResponse) => void

export interface RecordingUpstream {
  readonly url: string
  readonly requests: RecordedRequest[]
  respond (fn: Responder): void
  close (): Promise<void>
}

export const jsonResponder = (status: number, body: unknown, headers: Record<string, string> = {}): Responder => (_req, res) => {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

export async function startRecordingUpstream (t: Test, responder: Responder = jsonResponder(200, {})): Promise<RecordingUpstream> {
  const requests: RecordedRequest[] = []
  let current = responder
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks)
      }
      // The transport matrix's `config first` opener is not the test's (transports.ts).
      if (isOpener(req.headers)) return jsonResponder(200, { defaults: {}, overrides: {} })(recorded, res)
      requests.push(recorded)
      current(recorded, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const close = async (): Promise<void> => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(close)
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond (fn) { current = fn },
    close
  }
}

/**
 * A responder that relays each recorded request to `target` (a catalog) and its answer back: the
 * recording upstream then stands between iceguard and a real catalog and sees every byte sent to it.
 */
export function relayResponder (target: string): Responder {
  return (req, res) => {
    const headers: Record<string, string | string[]> = {}
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined && k !== 'host' && k !== 'connection' && k !== 'transfer-encoding') headers[k] = v
    }
    request(`${target}${req.url}`, { method: req.method as 'GET', headers, ...(req.body.length > 0 && { body: req.body }) })
      .then(async (answer) => {
        const body = Buffer.from(await answer.body.arrayBuffer())
        const out: Record<string, string | string[]> = {}
        for (const [k, v] of Object.entries(answer.headers)) {
          if (v !== undefined && k !== 'connection' && k !== 'transfer-encoding' && k !== 'keep-alive') out[k] = v
        }
        out['content-length'] = String(body.length)
        res.writeHead(answer.statusCode, out)
        res.end(body)
      })
      .catch(() => { res.destroy() })
  }
}
