import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { ERRORS, GateError } from '../errors.js'
import { parseJsonText, writeJson } from '../iceberg/json-text.js'
import { decodePathSegment, namespaceLevels } from '../iceberg/rest-path.js'
import { badRequest, type CatalogContext, type CatalogRequest, type Reply } from './context.js'
import type { KeyedLock } from './lock.js'
import { advertisedEndpoints, matchRoute } from './routes.js'
import { checkName, checkNamespace, type CatalogStore } from './store.js'

/**
 * The HTTP face of the embedded catalog, on plain `node:http`. The path is split by hand, never
 * through `new URL()`, which would resolve dot segments and re-encode what the client sent.
 */

export interface RecordedRequest {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

interface CatalogServerOptions {
  store: CatalogStore
  locks: KeyedLock
  prefix?: string
  basePath?: string
  /** When given, every request received is appended here, body as raw bytes. */
  record?: RecordedRequest[]
}

const MAX_BODY = 32 * 1024 * 1024
// The first segment after /v1/ is a prefix unless it is one of the spec's resource names.
const RESOURCES = new Set(['namespaces', 'tables', 'transactions', 'views'])

export function createCatalogServer (opts: CatalogServerOptions): Server {
  const ctx: CatalogContext = { store: opts.store, locks: opts.locks }
  const basePath = (opts.basePath ?? '').replace(/\/+$/, '')
  return createServer((req, res) => {
    const chunks: Buffer[] = []
    let size = 0
    let tooLarge = false
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY) tooLarge = true
      else chunks.push(chunk)
    })
    req.on('error', () => res.destroy())
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      opts.record?.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, body })
      if (tooLarge) {
        send(res, req.method, errorReply(new GateError(ERRORS.BODY_TOO_LARGE, `Request body is larger than ${MAX_BODY} bytes`)))
        return
      }
      handle(ctx, opts, basePath, req, body).then(
        reply => send(res, req.method, reply),
        err => send(res, req.method, errorReply(err))
      )
    })
  })
}

async function handle (ctx: CatalogContext, opts: CatalogServerOptions, basePath: string, req: IncomingMessage, body: Buffer): Promise<Reply> {
  const method = (req.method ?? 'GET').toUpperCase()
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  let rawPath = q < 0 ? url : url.slice(0, q)
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1))
  if (basePath !== '') {
    if (!rawPath.startsWith(basePath + '/')) throw notFoundPath(method, rawPath)
    rawPath = rawPath.slice(basePath.length)
  }
  if (!rawPath.startsWith('/v1/')) throw notFoundPath(method, rawPath)
  let segments = rawPath.slice('/v1/'.length).split('/')

  if (segments.length === 1 && segments[0] === 'config') {
    if (method !== 'GET') throw methodNotAllowed(method, ['GET'])
    return configReply(opts.prefix)
  }
  if (segments.length === 2 && segments[0] === 'oauth' && segments[1] === 'tokens') {
    if (method !== 'POST') throw methodNotAllowed(method, ['POST'])
    // A development catalog has no identity provider: any client credential gets a token.
    return { status: 200, body: { access_token: randomUUID(), token_type: 'bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', expires_in: 3600 } }
  }
  if (segments.length > 1 && !RESOURCES.has(segments[0] as string)) {
    const prefix = decodeSegment(segments[0] as string)
    if (opts.prefix !== undefined && prefix !== opts.prefix) {
      throw new GateError(ERRORS.NOT_FOUND, `Unknown prefix: ${prefix}`)
    }
    segments = segments.slice(1)
  }
  const match = matchRoute(segments)
  if (match === undefined) throw notFoundPath(method, rawPath)
  const handler = match.route.methods[method]
  if (handler === undefined) throw methodNotAllowed(method, Object.keys(match.route.methods))

  const { ns, table } = match.params
  let parsed: { value: unknown } | undefined
  const request: CatalogRequest = {
    method,
    namespace: ns === undefined ? [] : checkNamespace(namespaceLevels(decodeSegment(ns))),
    table: table === undefined ? '' : checkName(match.route.path.includes('views') ? 'view' : 'table', decodeSegment(table)),
    query,
    headers: req.headers,
    body: () => {
      parsed ??= { value: parseBody(body) }
      return parsed.value
    }
  }
  return await handler(ctx, request)
}

function configReply (prefix: string | undefined): Reply {
  const overrides: Record<string, string> = {}
  if (prefix !== undefined) overrides.prefix = prefix
  return { status: 200, body: { defaults: {}, overrides, endpoints: advertisedEndpoints() } }
}

/** Path decoding as the Java reference server does it (`rest-path.ts`); a malformed escape is a 400. */
function decodeSegment (raw: string): string {
  const decoded = decodePathSegment(raw)
  if (decoded === undefined) throw badRequest(`Malformed path segment: ${raw}`)
  return decoded
}

/** Parses a request body losslessly; any syntax problem (a conflicting duplicate key too) is a 400 naming where it is. */
function parseBody (body: Buffer): unknown {
  try {
    return parseJsonText(body.toString('utf8'))
  } catch (err) {
    throw badRequest(`Malformed request: ${(err as Error).message}`)
  }
}

const notFoundPath = (method: string, path: string): GateError =>
  new GateError(ERRORS.NOT_FOUND, `No route for ${method} ${path}`)

const methodNotAllowed = (method: string, allowed: string[]): GateError =>
  new GateError(ERRORS.METHOD_NOT_ALLOWED, `Method ${method} is not allowed here; allowed: ${allowed.join(', ')}`, { headers: { allow: allowed.join(', ') } })

function errorReply (err: unknown): Reply {
  const e = err instanceof GateError
    ? err
    : new GateError(ERRORS.INTERNAL, `Embedded catalog failed: ${(err as Error)?.message ?? String(err)}`)
  return { status: e.statusCode, body: e.toResponse(), headers: { ...e.headers } }
}

function send (res: ServerResponse, method: string | undefined, reply: Reply): void {
  if (res.headersSent || res.destroyed) return
  const headers: Record<string, string | number> = { ...reply.headers }
  let chunks: readonly Buffer[] = []
  if ((reply.chunks !== undefined || reply.body !== undefined) && reply.status !== 204 && reply.status !== 304) {
    chunks = reply.chunks ?? [Buffer.from(writeJson(reply.body), 'utf8')]
    headers['content-type'] = 'application/json'
    headers['content-length'] = chunks.reduce((n, c) => n + c.length, 0)
  }
  res.writeHead(reply.status, headers)
  if (method === 'HEAD') { res.end(); return }
  // Corked, the chunks leave in one vectored write; each is handed on, none copied into a new buffer.
  res.cork()
  for (const chunk of chunks) res.write(chunk)
  res.end()
}
