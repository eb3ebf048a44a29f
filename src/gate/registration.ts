/**
 * The gate's registration check over the policy's settings: `TABLE_NO_REGISTER`
 * (src/engine/rules/platform/table-no-register.ts) at `error`, or a frozen scope, refuses registerTable
 * and registerView.
 */
import { REGISTRATION_RULE } from '../engine/rules/platform/table-no-register.js'
import type { RuleSettings } from '../engine/rules/rule.js'
import type { RegistrationCheck } from './gate-types.js'
import type { TableRef } from '../iceberg/rest-path.js'

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
