/**
 * Schema validation errors as one message that names the field: `body.request.updates must be
 * array`, `body must have property "request"`. For a union, the error from the branch that got
 * furthest is the one that explains.
 */
interface AjvError {
  readonly instancePath: string
  readonly keyword: string
  readonly message?: string
  readonly params: Record<string, unknown>
}

function dotted (instancePath: string): string {
  return instancePath.split('/').slice(1).map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map(s => /^\d+$/.test(s) ? `[${s}]` : `.${s}`).join('')
}

export function validationMessage (errors: readonly AjvError[], dataVar: string): string {
  const useful = errors.filter(e => e.keyword !== 'anyOf' && e.keyword !== 'oneOf' && e.keyword !== 'if')
  const pool = useful.length > 0 ? useful : errors
  const best = pool.reduce((a, b) => b.instancePath.length > a.instancePath.length ? b : a)
  const at = `${dataVar}${dotted(best.instancePath)}`
  switch (best.keyword) {
    case 'required': return `${at} must have property "${String(best.params.missingProperty)}"`
    case 'additionalProperties': return `${at} has unknown property "${String(best.params.additionalProperty)}"`
    case 'enum': return `${at} must be one of ${(best.params.allowedValues as unknown[] | undefined)?.map(v => JSON.stringify(v)).join(', ') ?? 'the allowed values'}`
    case 'const': {
      // A union of literals fails once per literal: name them all (`op must be one of "add-column", …`).
      const allowed = [...new Set(pool.filter(e => e.keyword === 'const' && e.instancePath === best.instancePath).map(e => JSON.stringify(e.params.allowedValue)))]
      return allowed.length > 1 ? `${at} must be one of ${allowed.join(', ')}` : `${at} must be ${allowed[0] ?? 'the allowed value'}`
    }
    default: return `${at} ${best.message ?? 'is invalid'}`
  }
}
