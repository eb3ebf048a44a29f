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

export function adminValidatorCompiler (): FastifySchemaCompiler<AnySchema> {
  const body = ajvFor(false)
  const params = ajvFor(true)
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : params).compile(schema)
}
