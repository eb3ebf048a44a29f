/**
 * Validation for the admin scope. Bodies are checked as sent, never normalised:
 * Fastify's defaults would coerce `"db"` into `["db"]` and silently drop unknown keys, so a typo
 * would pass as something else. Path and query parameters arrive as strings and are coerced.
 */
import { Ajv, type AnySchema, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { SHARED_SCHEMAS } from '../../src/schemas/index.js'

function ajvFor (coerce: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes: coerce, removeAdditional: false, useDefaults: false, allErrors: false, strict: false })
  for (const s of SHARED_SCHEMAS) ajv.addSchema(s as AnySchema)
  return ajv
}

/**
 * One pair per process, made on first use, and one compiled validator per schema text: the admin
 * routes hand Fastify new schema objects each time an app is built (a reload, or a test that starts
 * many), and Ajv remembers what it compiled per object, so the same schemas were compiled again for
 * every app. Keyed by the JSON text, an app built again compiles nothing twice.
 */
let instances: { body: Ajv, params: Ajv } | undefined
const compiled = { body: new Map<string, ValidateFunction>(), params: new Map<string, ValidateFunction>() }

export function adminValidatorCompiler (): FastifySchemaCompiler<AnySchema> {
  instances ??= { body: ajvFor(false), params: ajvFor(true) }
  const ajvs = instances
  return ({ schema, httpPart }) => {
    const part = httpPart === 'body' ? 'body' : 'params'
    const text = JSON.stringify(schema)
    let validate = compiled[part].get(text)
    if (validate === undefined) {
      validate = ajvs[part].compile(schema)
      compiled[part].set(text, validate)
    }
    return validate
  }
}
