/**
 * TypeBox validation errors → PolicyIssues with positions. TypeBox reports a union mismatch as
 * "Expected union value"; for the policy's enums (mode, severity, level) that says nothing, so the
 * allowed values are listed instead.
 */
import { ValueErrorType, type ValueErrorIterator, type ValueError } from '@sinclair/typebox/errors'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { pointerSegments, type PolicyIssue, type YamlSource } from './yaml-source.js'

function literals (schema: TSchema): unknown[] | undefined {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf
  if (!anyOf) return undefined
  const out: unknown[] = []
  for (const s of anyOf) {
    if ('const' in s) out.push((s as unknown as { const: unknown }).const)
    else return undefined
  }
  return out
}

function describe (e: ValueError): string {
  const lits = literals(e.schema)
  const where = e.path === '' ? 'document' : pointerSegments(e.path).join('.')
  if (lits) return `${where}: must be one of ${lits.map(l => JSON.stringify(l)).join(', ')}, got ${JSON.stringify(e.value)}`
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return `${where}: unknown key`
  if (e.type === ValueErrorType.ObjectRequiredProperty) return `${where}: required`
  if (e.type === ValueErrorType.Union) {
    const desc = (e.schema as { description?: string }).description
    return `${where}: ${desc ?? 'does not match any allowed form'}`
  }
  return `${where}: ${e.message.charAt(0).toLowerCase()}${e.message.slice(1)}`
}

/** Every error, deduplicated by path (a union failure otherwise repeats once per branch). */
export function schemaIssues (y: YamlSource, prefix: readonly (string | number)[], errors: ValueErrorIterator): PolicyIssue[] {
  const out: PolicyIssue[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    const segments = [...prefix, ...pointerSegments(e.path)]
    const key = segments.join('/')
    if (seen.has(key)) continue
    seen.add(key)
    // A union of a shorthand and an object form: report against the branch the value was meant for.
    if (e.type === ValueErrorType.Union && !literals(e.schema)) {
      const branch = branchFor(e.schema, e.value)
      if (branch) {
        const nested = schemaIssues(y, segments, Value.Errors(branch, e.value))
        if (nested.length > 0) { out.push(...nested); continue }
      }
    }
    const issue = y.at(segments, describe({ ...e, path: '/' + segments.join('/') }), e.type === ValueErrorType.ObjectAdditionalProperties)
    out.push(issue)
  }
  return out
}

function branchFor (schema: TSchema, value: unknown): TSchema | undefined {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf ?? []
  const jsType = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value
  const typeOf = (b: TSchema): string | undefined => {
    const declared = (b as { type?: string }).type
    if (declared !== undefined) return declared === 'integer' ? 'number' : declared
    const lits = literals(b)
    return lits !== undefined && lits.length > 0 ? typeof lits[0] : undefined
  }
  const matches = anyOf.filter(b => typeOf(b) === jsType)
  return matches.length === 1 ? matches[0] : undefined
}

/** File order; one problem per location (a value the schema refused is not checked again). */
export function sortIssues (issues: readonly PolicyIssue[]): PolicyIssue[] {
  const seen = new Set<string>()
  return issues
    .filter(i => { const k = `${i.source}:${i.path === '' ? `${i.line}:${i.column}:${i.message}` : i.path}`; if (seen.has(k)) return false; seen.add(k); return true })
    .sort((a, b) => a.source === b.source ? a.line - b.line || a.column - b.column : a.source < b.source ? -1 : 1)
}
