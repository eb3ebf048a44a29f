/**
 * Validation for the admin scope. Bodies are checked as sent, never normalised:
 * Fastify's defaults would coerce `"db"` into `["db"]` and silently drop unknown keys, so a typo
 * would pass as something else. Path and query parameters arrive as strings and are coerced.
 */
import { Ajv, type AnySchema } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { SHARED_SCHEMAS } from '../../src/schemas/index.js'

function ajvFor (coerce: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes: coerce, removeAdditional: false, useDefaults: false, allErrors: false, strict: false })
  for (const s of SHARED_SCHEMAS) ajv.addSchema(s as AnySchema)
  return ajv
}

/**
 * One pair per process, made on first use: the shared schemas and the route schemas are the same
 * objects in every app a process builds, and Ajv keeps what it compiled per schema object, so an
 * app built again (a reload, or a test that starts many) compiles nothing twice.
 */
let instances: { body: Ajv, params: Ajv } | undefined

export function adminValidatorCompiler (): FastifySchemaCompiler<AnySchema> {
  instances ??= { body: ajvFor(false), params: ajvFor(true) }
  const { body, params } = instances
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : params).compile(schema)
}
