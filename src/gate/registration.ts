/**
 * Whether `registerTable` and `registerView` are allowed in a scope. The metadata file being
 * registered lives in storage the gate does not read, so the gate cannot judge its schema before
 * the upstream accepts it; a platform team decides per scope instead, in the policy, with the
 * rule-like setting `TABLE_NO_REGISTER` (`error`: refused; `warn` or `off`: allowed, and a table's
 * history is checked and reported afterwards). A `freeze` scope refuses registration too:
 * `overwrite: true` would replace a frozen table's metadata wholesale.
 */
import type { Rule, RuleSettings } from '../rules/rule.js'
import type { RegistrationCheck, TableRef } from './gate-types.js'

export const REGISTRATION_RULE = 'TABLE_NO_REGISTER'

/**
 * The registry entry that lets a policy name the setting (`rules: { TABLE_NO_REGISTER: error }`)
 * like any rule, per scope. It judges no commit (no flows); the gate reads its severity when a
 * registerTable or registerView request arrives.
 */
export const TABLE_NO_REGISTER: Rule = {
  id: REGISTRATION_RULE,
  category: 'platform',
  purpose: 'Refuses registerTable and registerView in this scope (a registered metadata file was never judged by the gate).',
  defaultSeverity: 'off',
  flows: [],
  check: () => []
}

export function registrationCheck (settingsFor: (table: TableRef) => RuleSettings, known: (ruleId: string) => boolean): RegistrationCheck {
  return (table) => {
    const settings = settingsFor(table)
    if (settings.mode === 'freeze') return { allowed: false, reason: 'the scope is frozen' }
    // Only read when the rule registry knows the id: the policy resolves unknown ids to `error`
    // (fail closed for engine rules), which would refuse every registration by default.
    if (known(REGISTRATION_RULE) && settings.severity(REGISTRATION_RULE) === 'error' && !settings.isExcepted(REGISTRATION_RULE)) {
      return { allowed: false, reason: `${REGISTRATION_RULE} is error for this table` }
    }
    return { allowed: true }
  }
}
