/**
 * Break-glass in the gate: the `X-Iceguard-Override` header, verified with the policy module's
 * HMAC check, turns exactly the token's rules into warnings for exactly its table. The gate
 * refuses a token that does not verify (400, nothing forwarded) rather than ignoring it, so a
 * caller never believes an override was applied when it was not.
 */
import type { RuleSettings } from '../rules/rule.js'
import { OVERRIDE_HEADER, verifyOverride, withOverride } from '../policy/override-token.js'

export { OVERRIDE_HEADER }

/** A verified override: its id (for the audit line), dotted table and the rules it waives. */
export interface OverrideGrant {
  readonly id: string
  readonly table: string
  readonly rules: readonly string[]
  readonly expiresAt: string
}

export type OverrideVerifier = (token: string, table: { readonly namespace: readonly string[], readonly name: string }) =>
  | { readonly ok: true, readonly grant: OverrideGrant }
  | { readonly ok: false, readonly error: string }

/** A verifier over the HMAC secret from the configuration. */
export function overrideVerifier (secret: string, now: () => Date = () => new Date()): OverrideVerifier {
  return (token, table) => {
    const dotted = [...table.namespace, table.name].join('.')
    const result = verifyOverride(token, { table: dotted, secret, now: now() })
    if (!result.ok) return { ok: false, error: result.error }
    return { ok: true, grant: { id: result.id, table: result.table, rules: result.rules, expiresAt: result.expiresAt.toISOString() } }
  }
}

export function applyOverride (settings: RuleSettings, grant: OverrideGrant): RuleSettings {
  return withOverride(settings, grant.rules)
}

/**
 * The grant the override header asks for, verified against each table the write touches (a
 * transaction's token names one of them); `problem` says why it does not verify. No header: none.
 */
export function readOverride (
  header: string | string[] | undefined,
  verify: OverrideVerifier | undefined,
  tables: ReadonlyArray<{ readonly namespace: readonly string[], readonly name: string }>
): { readonly grant?: OverrideGrant } | { readonly problem: string } {
  const token = (Array.isArray(header) ? header[0] : header)?.trim()
  if (token === undefined || token === '') return {}
  if (verify === undefined) return { problem: 'overrides are not enabled on this gate (no override secret configured); remove the header' }
  const errors = new Set<string>()
  for (const table of tables) {
    const result = verify(token, table)
    if (result.ok) return { grant: result.grant }
    errors.add(result.error)
  }
  return { problem: [...errors].join('; ') }
}
