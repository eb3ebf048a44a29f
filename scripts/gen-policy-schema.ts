/**
 * Writes openapi/policy.schema.json from the TypeBox PolicySchema (the one definition of the
 * policy file's shape). `--check` exits 1 when the committed file is out of date.
 *
 *   npx tsx scripts/gen-policy-schema.ts [--check]
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { policyJsonSchema } from '../src/policy/policy-json-schema.js'

const target = fileURLToPath(new URL('../openapi/policy.schema.json', import.meta.url))
const next = policyJsonSchema()

if (process.argv.includes('--check')) {
  let current = ''
  try { current = readFileSync(target, 'utf8') } catch {}
  if (current !== next) {
    console.error('openapi/policy.schema.json is out of date: run npx tsx scripts/gen-policy-schema.ts')
    process.exit(1)
  }
  console.log('openapi/policy.schema.json is up to date')
} else {
  writeFileSync(target, next)
  console.log(`wrote ${target}`)
}
