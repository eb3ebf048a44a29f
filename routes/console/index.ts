/**
 * The console under `/console`: server-rendered pages over the same data as the admin API, for
 * people who would rather look than read JSON. No script runs in the pages; one small inline
 * stylesheet. Every page needs the read grant once admin authentication is configured, exactly as
 * the admin API's read endpoints do.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import formbody from '@fastify/formbody'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AdminIdentity } from '../../src/auth/access.js'
import type { AdminAuth } from '../../src/auth/admin-auth.js'
import { decisionBody } from '../../src/console/decision-page.js'
import { decisionsBody } from '../../src/console/decisions-page.js'
import type { DecisionFilters, DecisionSource, SourceCaller } from '../../src/console/decision-source.js'
import { consolePath, html, type Html } from '../../src/console/html.js'
import { page } from '../../src/console/layout.js'
import { loginBody, messageBody } from '../../src/console/login-page.js'
import type { OverrideSource } from '../../src/console/override-source.js'
import { GateError } from '../../src/errors.js'
import { namespaceSegment, tableName } from '../../src/iceberg/rest-path.js'
import { SCHEMA_PAGE_MAX } from '../../src/schemas/schema-history.js'
import type { TableReader, ViewIndexReader } from '../admin/admin-context.js'
import type { AdminPolicy } from '../admin/admin-context.js'
import { createConsoleSessions } from '../../src/auth/console-sessions.js'
import { catalogAuthorization, consoleCredential, SESSION_SECONDS, sessionId, signInCookie, signOutCookie } from './console-auth.js'
import { tableView } from './table-view.js'

interface ConsoleOptions {
  readonly auth: AdminAuth
  readonly tables: TableReader
  readonly policy: AdminPolicy
  /** The view index: the table page lists the views that read the table. */
  readonly views?: ViewIndexReader | undefined
  /** Where decisions come from; absent: the page says the decision log is not available. */
  readonly decisions?: DecisionSource | undefined
  /** Where the overrides in force come from; absent: the page says override records are not available. */
  readonly overrides?: OverrideSource | undefined
  /** Mark the cookie `Secure` (iceguard is reached over HTTPS). */
  readonly secureCookie: boolean
  /** Whether identity-provider tokens are accepted (the sign-in page says so). */
  readonly jwt: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleViewer?: { readonly identity: AdminIdentity | undefined, readonly source: SourceCaller, readonly cookie: boolean, readonly catalogAuthorization: string | undefined }
  }
}

/** Pages carry user input: no script may run, nothing may frame them, forms post only here. */
const HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not `no-referrer`: under it browsers send `Origin: null` with form posts, and sign-in checks Origin.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store'
}

const DecisionQuery = Type.Object({
  namespace: Type.Optional(Type.String()),
  table: Type.Optional(Type.String()),
  verdict: Type.Optional(Type.String()),
  rule: Type.Optional(Type.String()),
  'page-token': Type.Optional(Type.String())
})

const TableParams = Type.Object({ namespace: Type.String(), table: Type.String() })

const TableQuery = Type.Object({
  prefix: Type.Optional(Type.String()),
  /** A page token of the schema history (absent: the newest schemas). */
  'schemas-from': Type.Optional(Type.String()),
  /** How many schemas the timeline shows. */
  schemas: Type.Optional(Type.Integer({ minimum: 1, maximum: SCHEMA_PAGE_MAX }))
})

export default async function consoleRoutes (app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  await app.register(formbody)
  app.decorateRequest('consoleViewer', undefined)
  const sessions = createConsoleSessions(SESSION_SECONDS * 1000)
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()

  const send = (reply: FastifyReply, status: number, title: string, body: Html, viewer?: FastifyRequest['consoleViewer']): FastifyReply =>
    reply.code(status).headers(HEADERS).type('text/html; charset=utf-8')
      .send(page({ title, principal: viewer?.identity?.principal, signedIn: viewer?.cookie === true }, body))

  // Pages other than sign-in and sign-out need the read grant.
  app.addHook('onRequest', async (request, reply) => {
    const url = request.routeOptions.url
    if (url === '/console/login' || url === '/console/logout' || url === undefined) return
    const credential = consoleCredential(request, sessions)
    let identity: AdminIdentity | undefined
    try {
      identity = await options.auth.authorize(credential.token, 'read', 'open the console')
    } catch (err) {
      if (!(err instanceof GateError)) throw err
      for (const [k, v] of Object.entries(err.headers)) reply.header(k, v)
      if (err.statusCode === 401) return send(reply, 401, 'Sign in', loginBody(credential.token === undefined ? undefined : err.message, options.jwt))
      return send(reply, err.statusCode, err.statusCode === 403 ? 'Not allowed' : 'Unavailable', messageBody(err.message))
    }
    request.consoleViewer = {
      identity,
      source: { authorization: credential.token === undefined ? catalogAuthorization(request, credential, identity) : `Bearer ${credential.token}` },
      cookie: credential.from === 'cookie' && credential.token !== undefined,
      catalogAuthorization: catalogAuthorization(request, credential, identity)
    }
  })

  app.get('/console', async (_request, reply) => reply.redirect('/console/decisions', 302))

  app.get('/console/login', async (_request, reply) => send(reply, 200, 'Sign in', loginBody(undefined, options.jwt)))

  typed.post('/console/login', {
    schema: { body: Type.Object({ token: Type.String() }) }
  }, async (request, reply) => {
    if (!sameOrigin(request)) return send(reply, 403, 'Not allowed', messageBody('Cannot sign in: the form was posted from another site'))
    const token = request.body.token.trim()
    // Nothing to check a token against: the console is open, and no cookie is worth setting.
    if (!options.auth.configured) return reply.redirect('/console/decisions', 303)
    try {
      await options.auth.authorize(token === '' ? undefined : token, 'read', 'sign in')
    } catch (err) {
      if (!(err instanceof GateError)) throw err
      return send(reply, err.statusCode, 'Sign in', loginBody(err.message, options.jwt))
    }
    const session = sessions.open(token, Date.now())
    return reply.header('set-cookie', signInCookie(session, options.secureCookie)).redirect('/console/decisions', 303)
  })

  // Sign-out ends the session on the server too: a copy of the cookie opens nothing afterwards.
  // Another site's form cannot sign a viewer out (the same Origin check as sign-in).
  app.post('/console/logout', async (request, reply) => {
    if (!sameOrigin(request)) return send(reply, 403, 'Not allowed', messageBody('Cannot sign out: the form was posted from another site'))
    const id = sessionId(request)
    if (id !== undefined) sessions.end(id)
    return reply.header('set-cookie', signOutCookie(options.secureCookie)).redirect('/console/login', 303)
  })

  typed.get('/console/decisions', { schema: { querystring: DecisionQuery } }, async (request, reply) => {
    const q = request.query
    const filters: DecisionFilters = {
      ...(nonEmpty(q.namespace) && { namespace: q.namespace }),
      ...(nonEmpty(q.table) && { table: q.table }),
      ...(nonEmpty(q.verdict) && { verdict: q.verdict }),
      ...(nonEmpty(q.rule) && { rule: q.rule }),
      ...(nonEmpty(q['page-token']) && { pageToken: q['page-token'] })
    }
    let result: Parameters<typeof decisionsBody>[1]
    if (options.decisions === undefined) {
      result = { unavailable: 'The decision log is not available on this server.' }
    } else {
      try {
        result = await options.decisions.list(filters, request.consoleViewer?.source ?? {})
      } catch (err) {
        request.log.warn({ err }, 'console: decisions unavailable')
        result = { unavailable: (err as Error).message }
      }
    }
    return send(reply, 200, 'Decisions', decisionsBody(filters, result), request.consoleViewer)
  })

  typed.get('/console/decisions/:id', { schema: { params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }) } }, async (request, reply) => {
    const id = request.params.id
    if (options.decisions === undefined) return send(reply, 200, 'Decision', messageBody('The decision log is not available on this server.'), request.consoleViewer)
    let found
    try {
      found = await options.decisions.get(id, request.consoleViewer?.source ?? {})
    } catch (err) {
      request.log.warn({ err }, 'console: decision unavailable')
      return send(reply, 200, 'Decision', messageBody((err as Error).message), request.consoleViewer)
    }
    if (found === undefined) return send(reply, 404, 'Decision', messageBody(`Cannot find decision ${id}: no such decision (unknown id, or older than the retention)`), request.consoleViewer)
    return send(reply, 200, `Decision ${found.id}`, decisionBody(found), request.consoleViewer)
  })

  typed.get('/console/tables', { schema: { querystring: Type.Object({ table: Type.Optional(Type.String()) }) } }, async (request, reply) => {
    const parts = (request.query.table ?? '').split('.')
    const name = parts.pop() ?? ''
    if (parts.length > 0 && name !== '' && parts.every(p => p !== '')) return reply.redirect(consolePath('tables', namespaceSegment(parts), name), 303)
    const problem = request.query.table === undefined ? '' : html`<p class="notice error">Cannot open table "${request.query.table}": name it as namespace.table, e.g. db.orders</p>`
    return send(reply, request.query.table === undefined ? 200 : 400, 'Tables', html`${problem}<form class="filters" method="get" action="/console/tables">
<label>Table<input name="table" placeholder="db.orders" required></label><button type="submit">Open</button></form>`, request.consoleViewer)
  })

  typed.get('/console/tables/:namespace/:table', { schema: { params: TableParams, querystring: TableQuery } }, async (request, reply) => {
    const q = request.query
    const view = await tableView(options, request.params.namespace, request.params.table, q.prefix, request.consoleViewer?.catalogAuthorization,
      { from: nonEmpty(q['schemas-from']) ? q['schemas-from'] : undefined, count: q.schemas })
    if (!view.ok) return send(reply, 400, 'Table', messageBody(view.problem), request.consoleViewer)
    return send(reply, 200, `Table ${tableName(view.table)}`, view.body, request.consoleViewer)
  })
}

function nonEmpty (v: string | undefined): v is string {
  return v !== undefined && v.trim() !== ''
}

/**
 * A sign-in or sign-out posted from another site is refused (login CSRF, forced sign-out): browsers
 * send `Origin` on every POST (Fetch standard), and it must name the host the form was served from.
 */
function sameOrigin (request: FastifyRequest): boolean {
  const origin = request.headers.origin
  if (origin === undefined) return true
  try {
    return new URL(origin).host === request.headers.host
  } catch {
    return false
  }
}
