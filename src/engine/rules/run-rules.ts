/**
 * Runs rules against one commit and turns their violations into findings: the severity comes from
 * the settings ('off' skips the rule), a policy exception drops the finding, and warn mode turns
 * every error into a warning. Every rule runs; the client gets all findings at once.
 */
import type { CommitFlow, Finding, Rule, RuleContext, RuleSettings, Violation } from './rule.js'

/** A rule without `flows` applies to every flow but views. */
const DEFAULT_FLOWS: readonly CommitFlow[] = ['update', 'revert', 'create', 'staged-create', 'replace']

const NO_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({})

export function runRules (rules: readonly Rule[], ctx: Omit<RuleContext, 'options'>, settings: RuleSettings): Finding[] {
  const findings: Finding[] = []
  const { flow } = ctx
  // One context for every rule, its options swapped per rule: a rule reads its context only while
  // it runs (a generator is drained here before the next rule starts), so nobody sees the swap.
  const ruleCtx: { -readonly [K in keyof RuleContext]: RuleContext[K] } = { ...ctx, options: NO_OPTIONS }
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r] as Rule
    if (!(rule.flows ?? DEFAULT_FLOWS).includes(flow)) continue
    const configured = settings.severity(rule.id)
    if (configured === 'off') continue
    let violations: Iterable<Violation>
    try {
      ruleCtx.options = settings.options(rule.id)
      const result = rule.check(ruleCtx)
      // Most rules return an array; a generator is drained inside the try, so a throw is caught.
      violations = Array.isArray(result) ? result : [...result]
    } catch (err) {
      // Rules must not throw; if one does, fail closed with a finding that says so.
      violations = [{ rule: rule.id, message: `Cannot evaluate rule ${rule.id}: ${err instanceof Error ? err.message : String(err)}` }]
    }
    findings.push(...settle(rule.id, violations, settings))
  }
  return findings
}

/**
 * One rule's violations as findings under the settings: none when the rule is off, the policy's
 * severity (every finding a warning in warn mode), excepted paths dropped. Also used for what is
 * judged outside a commit (a table dropped or renamed while views read it).
 */
export function settle (ruleId: string, violations: Iterable<Violation>, settings: RuleSettings): Finding[] {
  const configured = settings.severity(ruleId)
  if (configured === 'off') return []
  const severity = settings.mode === 'warn' ? 'warn' : configured
  const findings: Finding[] = []
  for (const v of violations) {
    if (settings.isExcepted(ruleId, v.path)) continue
    findings.push({ ...v, rule: ruleId, severity })
  }
  return findings
}
