/**
 * Wire shapes of the decision log and the override records (`/admin/v1/decisions`,
 * `/admin/v1/overrides`), and their mapping from the store's records.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { Decision } from '../decisions/decision.js'
import type { Verdict } from '../engine/rules/rule.js'
import type { OverrideRecord } from '../decisions/decision-store.js'
import { ref } from './ref.js'

/** The wire form of the engine's `Verdict` (src/engine/rules/rule.ts). */
export const DECISION_VERDICTS = ['allow', 'warn', 'deny', 'conflict', 'refused', 'error'] as const satisfies readonly Verdict[]

const DecisionVerdictSchema = Type.Union(DECISION_VERDICTS.map(v => Type.Literal(v)), {
  $id: 'DecisionVerdict',
  description: 'allow/warn: forwarded (warn with findings let through); deny: refused by a rule; conflict: a requirement no longer held (409); ' +
    'refused: answered without judging (malformed, not authorised upstream, missing requirement); error: the upstream could not be consulted or the outcome is unknown.'
}) satisfies { static: Verdict }

const DecisionFindingSchema = Type.Object({
  rule: Type.String({ description: 'Rule id (as it was when the decision was made).' }),
  severity: Type.Union([Type.Literal('error'), Type.Literal('warn')]),
  message: Type.String(),
  'field-id': Type.Optional(Type.Integer()),
  path: Type.Optional(Type.String())
}, { $id: 'DecisionFinding', additionalProperties: false })

export const DecisionSchema = Type.Object({
  id: Type.String(),
  time: Type.String({ format: 'date-time' }),
  'request-id': Type.String({ description: 'The request id of the write (shared by the decisions of one transaction).' }),
  table: Type.Object({
    namespace: Type.Array(Type.String()),
    name: Type.String()
  }, { additionalProperties: false }),
  kind: Type.String({ description: 'update-table, transaction, create-table, register-table, update-view, create-view or register-view.' }),
  verdict: ref(DecisionVerdictSchema),
  principal: Type.Union([Type.String(), Type.Null()], { description: 'Non-secret identity of the caller: `sub:<subject>` or `admin-token` when iceguard verified it (admin API commits); `unverified-sub:<subject>` or `unverified-user:<name>` when read from a credential iceguard did not verify (a JWT, HTTP Basic); otherwise `token:<fingerprint>`.' }),
  findings: Type.Array(ref(DecisionFindingSchema)),
  changes: Type.String({ description: 'The schema diff summary, one line per change by field id; empty when nothing was judged.' }),
  override: Type.Union([
    Type.Object({ id: Type.String(), rules: Type.Array(Type.String()) }, { additionalProperties: false }),
    Type.Null()
  ], { description: 'The break-glass override token used, and the rules it waived.' })
}, { $id: 'Decision', additionalProperties: false })

export const DecisionListSchema = Type.Object({
  decisions: Type.Array(ref(DecisionSchema)),
  'next-page-token': Type.Union([Type.String(), Type.Null()], { description: 'Pass as `page-token` for the next (older) page; null on the last page.' })
}, { $id: 'DecisionList', additionalProperties: false })

export const OverrideSchema = Type.Object({
  id: Type.String(),
  table: Type.String({ description: 'Dotted table name the token is for.' }),
  rules: Type.Array(Type.String()),
  reason: Type.Union([Type.String(), Type.Null()]),
  'minted-by': Type.Union([Type.String(), Type.Null()], { description: 'Non-secret identity of whoever minted it through the admin API.' }),
  'issued-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  'expires-at': Type.String({ format: 'date-time' }),
  source: Type.Union([Type.Literal('minted'), Type.Literal('seen'), Type.Literal('revoked')], {
    description: 'minted: through the admin API; seen: first known when the gate accepted it; revoked: revoked before iceguard saw it.'
  }),
  'revoked-at': Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  'revoked-by': Type.Union([Type.String(), Type.Null()])
}, { $id: 'OverrideRecord', additionalProperties: false })

export const OverrideListSchema = Type.Object({
  overrides: Type.Array(ref(OverrideSchema))
}, { $id: 'OverrideList', additionalProperties: false })

export const MintOverrideRequestSchema = Type.Object({
  table: Type.String({ minLength: 3, description: 'Dotted table name, `namespace.table`.' }),
  rules: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
  ttl: Type.String({ minLength: 1, description: 'Lifetime: 90s, 15m, 1h, 2d or 1h30m (at most 7 days).' }),
  reason: Type.String({ minLength: 1 })
}, { $id: 'MintOverrideRequest', additionalProperties: false })

export const MintOverrideResponseSchema = Type.Object({
  token: Type.String({ description: 'Send as the X-Iceguard-Override header. Shown once; only its id is stored.' }),
  override: ref(OverrideSchema)
}, { $id: 'MintOverrideResponse', additionalProperties: false })

export const DECISION_SCHEMAS = [
  DecisionVerdictSchema, DecisionFindingSchema, DecisionSchema, DecisionListSchema,
  OverrideSchema, OverrideListSchema, MintOverrideRequestSchema, MintOverrideResponseSchema
]

type WireDecision = Static<typeof DecisionSchema>
type WireOverride = Static<typeof OverrideSchema>

export function decisionToWire (d: Decision): WireDecision {
  return {
    id: d.id,
    time: new Date(d.time).toISOString(),
    'request-id': d.requestId,
    table: { namespace: [...d.table.namespace], name: d.table.name },
    kind: d.kind,
    verdict: d.verdict,
    principal: d.principal ?? null,
    findings: d.findings.map(f => ({
      rule: f.rule,
      severity: f.severity,
      message: f.message,
      ...(f.fieldId !== undefined ? { 'field-id': f.fieldId } : {}),
      ...(f.path !== undefined ? { path: f.path } : {})
    })),
    changes: d.changes,
    override: d.override === undefined ? null : { id: d.override.id, rules: [...d.override.rules] }
  }
}

const iso = (ms: number | undefined): string | null => ms === undefined ? null : new Date(ms).toISOString()

export function overrideToWire (o: OverrideRecord): WireOverride {
  return {
    id: o.id,
    table: o.table,
    rules: [...o.rules],
    reason: o.reason ?? null,
    'minted-by': o.mintedBy ?? null,
    'issued-at': iso(o.issuedAt),
    'expires-at': new Date(o.expiresAt).toISOString(),
    source: o.source,
    'revoked-at': iso(o.revokedAt),
    'revoked-by': o.revokedBy ?? null
  }
}
