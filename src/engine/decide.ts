/**
 * The verdict for one evaluated commit, and the text that explains it. Pure: findings in, verdict
 * out. A stale base is a conflict (409), checked before anything else; then the mode decides.
 */
import type { RequirementConflict } from '../iceberg/requirements.js'
import { TABLE_FROZEN } from './rules/index.js'
import type { Finding, JudgedVerdict, RuleSettings } from './rules/rule.js'

interface DecideInput {
  readonly conflicts: readonly RequirementConflict[]
  readonly findings: readonly Finding[]
  readonly mode: RuleSettings['mode']
  /** The commit adds or switches a schema, partition spec or sort order. */
  readonly schemaTouched: boolean
}

interface DecideResult {
  readonly verdict: JudgedVerdict
  /** The input findings, plus TABLE_FROZEN when a frozen table's schema was touched. */
  readonly findings: Finding[]
}

/**
 * enforce: any error denies, any warning warns. warn: findings were already lowered to warnings.
 * freeze: a schema, spec or sort-order change is denied outright; data commits are judged as in
 * enforce mode (a malformed one is still refused).
 */
export function decide (input: DecideInput): DecideResult {
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

/**
 * A finding as one line: rule id, where (path, field id, old -> new type), then the rule's own
 * message; `table` first when a write names several tables. The one printing of a finding: error
 * stacks, explanations, the CLI.
 */
export function findingLine (f: Finding, table?: string): string {
  return `${findingHead(f, table)}: ${f.message}`
}

/** The line without the message (`Iceguard-Warnings` header): `table: RULE (path, field id N, old -> new)`. */
export function findingHead (f: Finding, table?: string): string {
  const where: string[] = []
  if (f.path !== undefined) where.push(f.path)
  if (f.fieldId !== undefined) where.push(`field id ${f.fieldId}`)
  if (f.oldType !== undefined || f.newType !== undefined) where.push(`${f.oldType ?? 'none'} -> ${f.newType ?? 'none'}`)
  const scope = table === undefined ? '' : `${table}: `
  return `${scope}${f.rule}${where.length > 0 ? ` (${where.join(', ')})` : ''}`
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
    const tail = warnings.length > 0 ? `; warnings: ${warnings.map(f => findingLine(f)).join('; ')}` : ''
    return `Schema change rejected (${errors.length} error${errors.length === 1 ? '' : 's'}): ${errors.map(f => findingLine(f)).join('; ')}${tail}`
  }
  if (verdict === 'warn') {
    return `Commit allowed with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} (${changes}): ${warnings.map(f => findingLine(f)).join('; ')}`
  }
  return `Commit allowed (${changes}, no findings)`
}
