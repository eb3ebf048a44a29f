/**
 * Runs rules against one commit and turns their violations into findings: the severity comes from
 * the settings ('off' skips the rule), a policy exception drops the finding, and warn mode turns
 * every error into a warning. Every rule runs; the client gets all findings at once.
 */
import type { CommitFlow, Finding, Rule, RuleContext, RuleSettings, Violation } from './rule.js'

/** A rule without `flows` applies to every flow but views. */
const DEFAULT_FLOWS: readonly CommitFlow[] = ['update', 'revert', 'create', 'staged-create', 'replace']

export function runRules (rules: readonly Rule[], ctx: Omit<RuleContext, 'options'>, settings: RuleSettings): Finding[] {
  const findings: Finding[] = []
  for (const rule of rules) {
    const configured = settings.severity(rule.id)
    if (configured === 'off') continue
    if (!(rule.flows ?? DEFAULT_FLOWS).includes(ctx.flow)) continue
    let violations: Violation[]
    try {
      violations = [...rule.check({ ...ctx, options: settings.options(rule.id) })]
    } catch (err) {
      // Rules must not throw; if one does, fail closed with a finding that says so.
      violations = [{ rule: rule.id, message: `Cannot evaluate rule ${rule.id}: ${err instanceof Error ? err.message : String(err)}` }]
    }
    for (const v of violations) {
      if (settings.isExcepted(rule.id, v.path)) continue
      findings.push({ ...v, rule: rule.id, severity: settings.mode === 'warn' ? 'warn' : configured })
    }
  }
  return findings
}
