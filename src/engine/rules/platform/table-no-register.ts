/**
 * Whether `registerTable` and `registerView` are allowed in a scope. The metadata file being
 * registered lives in storage the gate does not read, so the gate cannot judge its schema before
 * the upstream accepts it; a platform team decides per scope instead, in the policy, with the
 * rule-like setting `TABLE_NO_REGISTER` (`error`: refused; `warn` or `off`: allowed, and a table's
 * history is checked and reported afterwards). A `freeze` scope refuses registration too:
 * `overwrite: true` would replace a frozen table's metadata wholesale. The gate reads the setting
 * through `src/gate/registration.ts`.
 */
import type { Rule } from '../rule.js'

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
