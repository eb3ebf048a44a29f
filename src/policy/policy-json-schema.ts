/**
 * The policy file's JSON Schema as committed in `openapi/policy.schema.json`: PolicySchema with
 * TypeBox's internal symbols dropped (JSON.stringify skips them) and a `$schema` for editors.
 */
import { PolicySchema } from './policy-schema.js'

export function policyJsonSchema (): string {
  const doc = { $schema: 'http://json-schema.org/draft-07/schema#', ...JSON.parse(JSON.stringify(PolicySchema)) as Record<string, unknown> }
  return JSON.stringify(doc, null, 2) + '\n'
}
