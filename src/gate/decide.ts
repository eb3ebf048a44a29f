/**
 * The verdict for one evaluated commit, and the text that explains it. Pure: findings in, verdict
 * out. A stale base is a conflict (409), checked before anything else; then the mode decides.
 */
import type { RequirementConflict } from '../iceberg/requirements.js'
import { TABLE_FROZEN } from '../rules/index.js'
import type { Finding, JudgedVerdict, RuleSettings } from '../rules/rule.js'

export interface DecideInput {
  readonly conflicts: readonly RequirementConflict[]
  readonly findings: readonly Finding[]
  readonly mode: RuleSettings['mode']
  /** The commit adds or switches a schema, partition spec or sort order. */
  readonly schemaTouched: boolean
}

export interface Decision {
  readonly verdict: JudgedVerdict
  /** The input findings, plus TABLE_FROZEN when a frozen table's schema was touched. */
  readonly findings: Finding[]
}

/**
 * enforce: any error denies, any warning warns. warn: findings were already lowered to warnings.
 * freeze: a schema, spec or sort-order change is denied outright; data commits are judged as in
 * enforce mode (a malformed one is still refused).
 */
export function decide (input: DecideInput): Decision {
  const findings = [...input.findings]
  if (input.conflicts.length > 0) return { verdict: 'conflict', findings }
  if (input.mode === 'freeze' && input.schemaTouched) {
    findings.unshift({
      rule: TABLE_FROZEN,
      severity: 'error',
      message: 'Cannot change a frozen table: schema, partition spec and sort order changes are refused while the table is frozen',
      explanation: 'Ask the platform team to lift the freeze for this table; data commits still pass.'
    })
  }
  const verdict: JudgedVerdict = findings.some(f => f.severity === 'error') ? 'deny' : findings.length > 0 ? 'warn' : 'allow'
  return { verdict, findings }
}

/** `RULE_ID: message` — a finding in one line. */
export function findingLine (f: Finding): string {
  return `${f.rule}: ${f.message}`
}

/**
 * Text that stands alone as an error message (pyiceberg shows only type and message): the verdict,
 * then every finding with its rule id, path, field id and old -> new type.
 */
export function explain (verdict: JudgedVerdict, findings: readonly Finding[], conflicts: readonly RequirementConflict[], changeCount: number): string {
  if (verdict === 'conflict') {
    return `Commit conflicts with the table's current state (${conflicts.length} requirement${conflicts.length === 1 ? '' : 's'} failed): ${conflicts.map(c => c.message).join('; ')}`
  }
  const errors = findings.filter(f => f.severity === 'error')
  const warnings = findings.filter(f => f.severity === 'warn')
  const changes = `${changeCount} schema change${changeCount === 1 ? '' : 's'}`
  if (verdict === 'deny') {
    const tail = warnings.length > 0 ? `; warnings: ${warnings.map(findingLine).join('; ')}` : ''
    return `Schema change rejected (${errors.length} error${errors.length === 1 ? '' : 's'}): ${errors.map(findingLine).join('; ')}${tail}`
  }
  if (verdict === 'warn') {
    return `Commit allowed with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} (${changes}): ${warnings.map(findingLine).join('; ')}`
  }
  return `Commit allowed (${changes}, no findings)`
}
