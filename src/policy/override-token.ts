/**
 * Break-glass overrides: a short-lived token, signed with HMAC-SHA256 by the platform team, that
 * turns exactly the named rules' errors into warnings for exactly one table until it expires.
 * Clients send it in the `X-Iceguard-Override` header; the secret comes from
 * `ICEGUARD_OVERRIDE_SECRET` (read by the config module, passed in here).
 *
 * Token: `igo1.<payload>.<mac>`, both base64url; payload is JSON with fixed key order
 * `{ v, id, table, rules, reason, iat, exp }` (seconds), and the MAC covers `igo1.<payload>`.
 *
 * `table` is dotted, and binds the token to one table by its levels: every dot separates namespace
 * levels and the last part is the name (`tableFromDotted`). A token for `a.b.c` is for namespace
 * `a`/`b`, table `c`, and for no other table that prints alike (namespace `a` with table `b.c`,
 * namespace `a.b` with table `c`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { ruleById, TABLE_FROZEN } from '../engine/rules/index.js'
import { sameTable, tableFromDotted, tableLevels, tableName, type TableRef } from '../iceberg/rest-path.js'
import { suggest } from './load-policy.js'
import type { RuleSettings, RuleSeverity } from '../engine/rules/rule.js'

export const OVERRIDE_HEADER = 'x-iceguard-override'
const PREFIX = 'igo1'
/** Shortest secret accepted: HMAC-SHA256 with a guessable key would let anyone mint tokens. */
export const MIN_OVERRIDE_SECRET_LENGTH = 16
/** Longest lifetime a token may have: break-glass is for hours, not a standing waiver (use a policy exception for that). */
export const MAX_OVERRIDE_TTL_SECONDS = 7 * 24 * 3600

interface MintOverrideInput {
  /** Dotted table name, `db.orders`. */
  readonly table: string
  readonly rules: readonly string[]
  readonly ttlSeconds: number
  readonly reason: string
  readonly secret: string
  readonly now?: Date
}

interface Payload {
  v: 1
  id: string
  table: string
  rules: string[]
  reason: string
  iat: number
  exp: number
}

type VerifiedOverride =
  | { readonly ok: true, readonly rules: readonly string[], readonly reason: string, readonly id: string, readonly table: string, readonly issuedAt: Date, readonly expiresAt: Date }
  | { readonly ok: false, readonly error: string }

function mac (secret: string, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest()
}

export function mintOverride (input: MintOverrideInput): string {
  if (input.secret.length < MIN_OVERRIDE_SECRET_LENGTH) throw new Error(`Cannot mint override: ICEGUARD_OVERRIDE_SECRET must be at least ${MIN_OVERRIDE_SECRET_LENGTH} characters`)
  if (tableFromDotted(input.table) === undefined) throw new Error(`Cannot mint override: table must be namespace.table (levels and name separated by dots, none empty), got "${input.table}"`)
  if (input.rules.length === 0) throw new Error('Cannot mint override: name at least one rule')
  if (input.reason.trim() === '') throw new Error('Cannot mint override: a reason is required (it is written to the audit log)')
  if (!Number.isInteger(input.ttlSeconds) || input.ttlSeconds <= 0 || input.ttlSeconds > MAX_OVERRIDE_TTL_SECONDS) {
    throw new Error(`Cannot mint override: ttl must be between 1 second and ${MAX_OVERRIDE_TTL_SECONDS / 3600} hours`)
  }
  for (const rule of input.rules) {
    const problem = notOverridable(rule)
    if (problem !== undefined) throw new Error(`Cannot mint override: ${problem}`)
  }
  const iat = Math.floor((input.now ?? new Date()).getTime() / 1000)
  const payload: Payload = {
    v: 1,
    id: randomBytes(12).toString('base64url'),
    table: input.table,
    rules: [...new Set(input.rules)].sort(),
    reason: input.reason,
    iat,
    exp: iat + input.ttlSeconds
  }
  const body = `${PREFIX}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`
  return `${body}.${mac(input.secret, body).toString('base64url')}`
}

/**
 * Spec rules guard the readability of the table itself: a commit they refuse would leave metadata
 * that readers cannot use (an `int → string` retype breaks every existing data file's reader).
 * Iceberg Java's `UpdateSchema.allowIncompatibleChanges()` never allows an invalid promotion
 * either. So no override waives them: refused when minting and when a token is used.
 */
function isSpecRule (ruleId: string): boolean {
  return ruleById(ruleId)?.category === 'spec'
}

function specRuleRefusal (ruleId: string): string {
  return `${ruleId} is an Iceberg spec rule: what it refuses would make the table unreadable, and no override can waive it`
}

/**
 * Why a token for this rule id would waive nothing, or undefined when it can: an unknown id (a
 * typo would otherwise mint a token that silently does nothing), the freeze (a mode, lifted in the
 * policy) and registration (a permission the policy grants, not a finding).
 */
function notOverridable (ruleId: string): string | undefined {
  if (isSpecRule(ruleId)) return specRuleRefusal(ruleId)
  if (ruleId === TABLE_FROZEN) return `${TABLE_FROZEN} is the freeze mode, not a rule finding; lift the freeze in the policy`
  if (ruleId === 'TABLE_NO_REGISTER') return 'TABLE_NO_REGISTER is a permission set in the policy (TABLE_NO_REGISTER: off), not a finding an override can waive'
  if (ruleById(ruleId) === undefined) return `unknown rule id "${ruleId}"${suggest(ruleId)}; GET /admin/v1/rules lists them`
  return undefined
}

/** `table`: the table the token is used on, by its levels (a dotted string is read with `tableFromDotted`). */
export function verifyOverride (token: string, opts: { readonly table: string | Pick<TableRef, 'namespace' | 'name'>, readonly secret: string, readonly now?: Date }): VerifiedOverride {
  const parts = token.trim().split('.')
  if (parts.length !== 3 || parts[0] !== PREFIX || !/^[A-Za-z0-9_-]+$/.test(parts[1] ?? '') || !/^[A-Za-z0-9_-]+$/.test(parts[2] ?? '')) {
    return { ok: false, error: 'Invalid override token: malformed (expected igo1.<payload>.<signature>)' }
  }
  const body = `${parts[0]}.${parts[1]}`
  const given = Buffer.from(parts[2] as string, 'base64url')
  const expected = mac(opts.secret, body)
  // Constant-time compare; lengths differ only for a mangled token, which reveals nothing.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, error: 'Invalid override token: signature does not match (tampered, or minted with another secret)' }
  }
  let p: Payload
  try {
    p = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as Payload
  } catch {
    return { ok: false, error: 'Invalid override token: malformed payload' }
  }
  if (p.v !== 1 || typeof p.table !== 'string' || !Array.isArray(p.rules) || typeof p.exp !== 'number' || typeof p.iat !== 'number' || typeof p.id !== 'string') {
    return { ok: false, error: 'Invalid override token: malformed payload' }
  }
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000)
  if (now >= p.exp) {
    return { ok: false, error: `Override token ${p.id} expired at ${new Date(p.exp * 1000).toISOString()}` }
  }
  const spec = p.rules.find(r => typeof r === 'string' && isSpecRule(r))
  if (spec !== undefined) return { ok: false, error: `Override token ${p.id} cannot be used: ${specRuleRefusal(spec)}` }
  const target = typeof opts.table === 'string' ? tableFromDotted(opts.table) : opts.table
  const bound = tableFromDotted(p.table)
  if (bound === undefined || target === undefined || !sameTable(bound, target)) {
    // Tables that print alike are told apart by their levels.
    const other = target === undefined ? String(opts.table) : tableName(target)
    const error = other !== p.table || bound === undefined || target === undefined
      ? `Override token ${p.id} is for table ${p.table}, not ${other}`
      : `Override token ${p.id} is for table ${p.table} (${tableLevels(bound)}), not ${tableLevels(target)}`
    return { ok: false, error }
  }
  return { ok: true, rules: p.rules, reason: p.reason, id: p.id, table: p.table, issuedAt: new Date(p.iat * 1000), expiresAt: new Date(p.exp * 1000) }
}

/** Whether an override minted for `dotted` is for `table`: the same namespace levels and name. */
export function overrideBinds (dotted: string, table: Pick<TableRef, 'namespace' | 'name'>): boolean {
  const bound = tableFromDotted(dotted)
  return bound !== undefined && sameTable(bound, table)
}

/**
 * Settings under an override: the named rules' errors become warnings; everything else, the mode
 * included, is untouched. A rule the token does not name still denies (wrong-rule tokens do nothing).
 */
export function withOverride (settings: RuleSettings, rules: readonly string[]): RuleSettings {
  const named = new Set(rules)
  return {
    mode: settings.mode,
    severity (ruleId: string): RuleSeverity {
      const s = settings.severity(ruleId)
      return s === 'error' && named.has(ruleId) && !isSpecRule(ruleId) ? 'warn' : s
    },
    options: (ruleId: string) => settings.options(ruleId),
    isExcepted: (ruleId: string, path?: string) => settings.isExcepted(ruleId, path)
  }
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** `90s`, `15m`, `1h`, `2d`, `1h30m`, or a bare number of seconds → seconds; throws on anything else. */
export function parseTtl (text: string): number {
  const t = text.replace(/\s+/g, '').toLowerCase()
  if (/^\d+$/.test(t) && Number(t) > 0) return Number(t)
  if (!/^(\d+[smhd])+$/.test(t)) throw new Error(`Invalid ttl "${text}": use a duration such as 90s, 15m, 1h, 2d or 1h30m`)
  let total = 0
  for (const m of t.matchAll(/(\d+)([smhd])/g)) total += Number(m[1]) * (UNITS[m[2] as string] as number)
  if (total <= 0) throw new Error(`Invalid ttl "${text}": must be longer than zero`)
  return total
}
