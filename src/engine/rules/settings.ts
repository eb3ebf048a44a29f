/**
 * Rule settings when no policy is loaded: enforce mode, every spec rule at its default severity,
 * every platform rule off, no options, no exceptions.
 */
import type { RuleSettings } from './rule.js'
import { SPEC_RULE_LIST } from './spec/index.js'

const SPEC_DEFAULTS = new Map(SPEC_RULE_LIST.map(r => [r.id, r.defaultSeverity]))

export const SPEC_ONLY_SETTINGS: RuleSettings = {
  mode: 'enforce',
  severity: id => SPEC_DEFAULTS.get(id) ?? 'off',
  options: () => ({}),
  isExcepted: () => false
}

/** SPEC_ONLY_SETTINGS with another mode (handy for dry runs and tests). */
export function specOnlySettings (mode: RuleSettings['mode']): RuleSettings {
  return { ...SPEC_ONLY_SETTINGS, mode }
}
