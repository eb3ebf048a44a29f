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
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { addSharedSchemas } from '../schemas/index.js'
import { icebergPaths } from '../schemas/iceberg-paths.js'

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

export const OPENAPI_INFO = {
  title: 'iceguard',
  version: packageVersion(),
  description: 'A schema-safety proxy for Apache Iceberg REST catalogs. Clients use iceguard as their catalog: every call is forwarded to the ' +
    'upstream catalog untouched, except the writes that change a table\'s schema, which are checked against the Iceberg spec and the ' +
    'platform policy first. The admin API answers "would this commit pass?", "what changed between two schemas?", "what names did a field have?" ' +
    'and "what policy applies to a table?". Every error is an Iceberg `IcebergErrorResponse` whose `code` equals the HTTP status.',
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' }
}

async function swaggerPlugin (app: FastifyInstance): Promise<void> {
  addSharedSchemas(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: OPENAPI_INFO,
      tags: [
        { name: 'admin', description: 'Dry runs, diffs, schema history, contracts, rules and policy. Table reads use the caller\'s Authorization.' },
        { name: 'iceberg', description: 'The Iceberg REST writes the gate judges before forwarding. Every other Iceberg route is forwarded untouched.' },
        { name: 'operations', description: 'Health, readiness and metrics.' },
        { name: 'rules', description: 'Rule documentation pages, the targets of the links in refusals.' }
      ],
      components: {
        securitySchemes: {
          adminToken: { type: 'http', scheme: 'bearer', description: 'The value of ICEGUARD_ADMIN_TOKEN.' },
          catalogAuth: { type: 'http', scheme: 'bearer', description: 'The credentials the upstream catalog expects; relayed as they come.' }
        }
      }
    },
    refResolver: {
      buildLocalReference (json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`
      }
    },
    transform ({ schema, url }) {
      if (!DOCUMENTED.test(url)) return { schema: { ...schema, hide: true }, url }
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
