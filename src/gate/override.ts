/**
 * Break-glass, one meaning everywhere: the gate (a real commit on either transport), the dry run
 * (`POST /admin/v1/validate`), schema changes (dry run and apply) and the CLI (`check`, `evolve`,
 * `plan`) all read the `X-Iceguard-Override` token with `checkOverrideToken`, judge with
 * `evaluateUnder`, and describe the grant with `overrideToWire`. So a token either verifies and
 * turns exactly its rules' errors on exactly its table into warnings marked `overridden` (verdict
 * `warn`: allowed, with the override named), or it is refused with the same 400 message wherever
 * it is sent — never ignored, so a caller never believes an override applied when it did not.
 */
import type { Evaluation } from '../engine/evaluate-commit.js'
import type { Finding, RuleSettings } from '../engine/rules/rule.js'
import type { TableRef } from '../iceberg/rest-path.js'
import { OVERRIDE_HEADER, overrideBinds, verifyOverride, withOverride } from '../policy/override-token.js'

export { OVERRIDE_HEADER }

/** A verified override: its id and reason (for the audit line), dotted table and the rules it waives. */
export interface OverrideGrant {
  readonly id: string
  readonly table: string
  readonly rules: readonly string[]
  readonly reason: string
  readonly expiresAt: string
}

export type OverrideVerifier = (token: string, table: TableRef) =>
  | { readonly ok: true, readonly grant: OverrideGrant }
  | { readonly ok: false, readonly error: string }

/** A verifier over the HMAC secret from the configuration (`ICEGUARD_OVERRIDE_SECRET`); none without one. */
export function overrideVerifier (secret: string | undefined, now: () => Date = () => new Date()): OverrideVerifier | undefined {
  if (secret === undefined || secret === '') return undefined
  return (token, table) => {
    const result = verifyOverride(token, { table, secret, now: now() })
    if (!result.ok) return { ok: false, error: result.error }
    return { ok: true, grant: { id: result.id, table: result.table, rules: result.rules, reason: result.reason, expiresAt: result.expiresAt.toISOString() } }
  }
}

/**
 * The grant a token asks for, verified against each table the write touches (a transaction's
 * token names one of them), or the refusal every entry point answers with (400
 * BadRequestException). No token: no grant.
 */
export function checkOverrideToken (
  header: string | string[] | undefined,
  verify: OverrideVerifier | undefined,
  tables: readonly TableRef[]
): { readonly grant?: OverrideGrant } | { readonly refusal: string } {
  const token = (Array.isArray(header) ? header[0] : header)?.trim()
  if (token === undefined || token === '') return {}
  if (verify === undefined) {
    return { refusal: overrideRefusal('overrides are not enabled here (no override secret configured); remove the token') }
  }
  const errors = new Set<string>()
  for (const table of tables) {
    const result = verify(token, table)
    if (result.ok) return { grant: result.grant }
    errors.add(result.error)
  }
  return { refusal: overrideRefusal([...errors].join('; ')) }
}

function overrideRefusal (problem: string): string {
  return `Cannot apply ${OVERRIDE_HEADER}: ${problem}; nothing was committed`
}

/**
 * The grant when it is for this very table, compared by levels (`overrideBinds`); a transaction's
 * other tables are judged without it.
 */
export function grantFor (grant: OverrideGrant | undefined, table: TableRef): OverrideGrant | undefined {
  return grant !== undefined && overrideBinds(grant.table, table) ? grant : undefined
}

/**
 * Evaluates under the table's settings and, when the grant is for this table, with its rules'
 * errors lowered to warnings; each finding the grant lowered is marked `overridden`, and the
 * explanation names the token, so every answer says why a denial became an allow.
 */
export function evaluateUnder (
  settings: RuleSettings,
  grant: OverrideGrant | undefined,
  table: TableRef,
  evaluate: (settings: RuleSettings) => Evaluation
): Evaluation & { readonly override?: OverrideGrant } {
  const applied = grantFor(grant, table)
  if (applied === undefined) return evaluate(settings)
  const evaluation = evaluate(withOverride(settings, applied.rules))
  const waived = new Set(applied.rules)
  const findings: Finding[] = evaluation.findings.map(f =>
    f.severity === 'warn' && waived.has(f.rule) && settings.severity(f.rule) === 'error' ? { ...f, overridden: true } : f)
  const used = findings.filter(f => f.overridden === true).map(f => f.rule)
  const explanation = used.length === 0
    ? evaluation.explanation
    : `${evaluation.explanation} (override ${applied.id} waived ${[...new Set(used)].join(', ')}: ${applied.reason})`
  return { ...evaluation, findings, explanation, override: applied }
}

/** The grant as every answer shows it (validate, schema changes, the CLI's json report). */
export function overrideToWire (grant: OverrideGrant): { id: string, table: string, rules: string[], reason: string, 'expires-at': string } {
  return { id: grant.id, table: grant.table, rules: [...grant.rules], reason: grant.reason, 'expires-at': grant.expiresAt }
}
