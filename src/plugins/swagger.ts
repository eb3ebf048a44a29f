/**
 * The OpenAPI 3.1 document of iceguard's own API, generated from the route schemas
 * (@fastify/swagger), served at `/openapi.json` and `/openapi.yaml`, with Swagger UI at `/docs`.
 *
 * Shared shapes keep their `$id` as component names. The Iceberg REST routes are documented by
 * hand (`icebergPaths`): the gate intercepts only the writes, and the document describes those
 * with the answers the gate adds (400 findings, 409 stale base, 502/504 state unknown, 503 not
 * forwarded); every other Iceberg route is forwarded untouched and is the upstream's to describe.
 */
import { readFileSync } from 'node:fs'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema } from 'fastify'
import fp from 'fastify-plugin'
import { IcebergErrorResponseSchema } from '../schemas/error-model.js'
import { addSharedSchemas } from '../schemas/index.js'
import { icebergPaths } from '../schemas/iceberg-paths.js'
import { ref } from '../schemas/ref.js'

/** Routes that belong in the document: iceguard's own API. */
const DOCUMENTED = /^\/(admin\/|rules\/|healthz$|readyz$|metrics$)/

function packageVersion (): string {
  // src/plugins → repository root, or dist/src/plugins → repository root.
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string, version?: string }
      if (pkg.name === 'iceguard' && typeof pkg.version === 'string') return pkg.version
    } catch {}
  }
  return '0.0.0'
}

const OPENAPI_INFO = {
  title: 'iceguard',
  version: packageVersion(),
  description: 'A schema-safety proxy for Apache Iceberg REST catalogs. Clients use iceguard as their catalog: every call is forwarded to the ' +
    'upstream catalog untouched, except the writes that change a table\'s schema, which are checked against the Iceberg spec and the ' +
    'platform policy first. The admin API answers "would this commit pass?", "what changed between two schemas?", "what names did a field have?" ' +
    'and "what policy applies to a table?". Every error is an Iceberg `IcebergErrorResponse` whose `code` equals the HTTP status.',
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' }
}

const ACCESS_TEXT = {
  read: 'Access: read. Open while no admin authentication is configured; otherwise the admin token or a JWT granting read.',
  commit: 'Access: write. Open while no admin authentication is configured (the catalog\'s own authorization decides); otherwise the admin token or a JWT granting write.',
  write: 'Access: write. Refused while no admin authentication is configured; otherwise the admin token or a JWT granting write.',
  depends: 'Access: read for a dry run, write for a commit (open while no admin authentication is configured).'
} as const

/** Admin operations name both bearer schemes and, in their description, the grant they need. */
function withAdminSecurity (schema: FastifySchema, access: unknown, method: string | string[]): FastifySchema {
  const get = method === 'GET' || (Array.isArray(method) && method.every(m => m === 'GET' || m === 'HEAD'))
  const key = typeof access === 'function' ? 'depends' : access === 'read' || access === 'commit' || access === 'write' ? access : get ? 'read' : 'write'
  const base = schema as FastifySchema & { description?: string, response?: Record<string, unknown> }
  const response = {
    ...base.response,
    ...(base.response?.[401] === undefined ? { 401: ref(IcebergErrorResponseSchema, { description: 'No admin token was sent, or it does not verify (wrong, expired, another issuer or audience).' }) } : {}),
    ...(base.response?.[403] === undefined ? { 403: ref(IcebergErrorResponseSchema, { description: 'The admin token does not grant the access this operation needs.' }) } : {})
  }
  const description = base.description === undefined ? ACCESS_TEXT[key] : `${base.description}\n\n${ACCESS_TEXT[key]}`
  return { ...schema, description, response, security: [{ adminToken: [] }, { adminJwt: [] }, { adminTokenHeader: [] }] } as FastifySchema
}

async function swaggerPlugin (app: FastifyInstance): Promise<void> {
  addSharedSchemas(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: OPENAPI_INFO,
      tags: [
        { name: 'admin', description: 'Dry runs, diffs, schema history, contracts, rules and policy. Table reads use the caller\'s catalog credential, never the admin credential.' },
        { name: 'iceberg', description: 'The Iceberg REST writes the gate judges before forwarding. Every other Iceberg route is forwarded untouched.' },
        { name: 'operations', description: 'Health, readiness and metrics.' },
        { name: 'rules', description: 'Rule documentation pages, the targets of the links in refusals.' }
      ],
      components: {
        securitySchemes: {
          adminToken: { type: 'http', scheme: 'bearer', description: 'The value of ICEGUARD_ADMIN_TOKEN: grants read and write.' },
          adminTokenHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Iceguard-Admin-Token',
            description: 'Either admin credential (the static token or a JWT), sent beside a catalog credential in Authorization that table reads and commits pass on.'
          },
          adminJwt: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'An access token of the identity provider set by ICEGUARD_ADMIN_JWKS_URL, with the configured issuer and audience; ' +
              'the claim ICEGUARD_ADMIN_JWT_CLAIM (default `scope`) grants read (`iceguard:read`) or write (`iceguard:write`, which includes read).'
          },
          catalogAuth: { type: 'http', scheme: 'bearer', description: 'The credentials the upstream catalog expects; relayed as they come.' }
        }
      }
    },
    refResolver: {
      buildLocalReference (json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`
      }
    },
    transform ({ schema, url, route }) {
      if (!DOCUMENTED.test(url)) return { schema: { ...schema, hide: true }, url }
      if (url.startsWith('/admin/')) return { schema: withAdminSecurity(schema, route.config?.adminAccess, route.method), url }
      return { schema, url }
    },
    transformObject (documentObject) {
      const doc = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
      const paths = (doc as { paths?: Record<string, unknown> }).paths ?? {}
      ;(doc as { paths?: Record<string, unknown> }).paths = { ...paths, ...icebergPaths() }
      return doc
    }
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 1 }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => reply.type('application/json').send(app.swagger()))
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) => reply.type('application/yaml').send(app.swagger({ yaml: true })))
}

export default fp(swaggerPlugin, { name: 'iceguard-swagger', fastify: '5.x' })
