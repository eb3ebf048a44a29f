/**
 * `GET /admin/v1/policy/effective?table=ns.name`: the settings that apply to one table and the
 * scope each came from (Confluent's `/config/{subject}` with the fallback chain made visible).
 */
import { Type, type Static } from '@sinclair/typebox'
import type { PolicyExplanation } from '../policy/resolve-policy.js'
import { RuleIdSchema } from './finding.js'
import { ref } from './ref.js'

const Source = Type.String({ description: 'Scope the value came from: `default`, `rule default`, `builtin:recommended`, `global`, `namespace:<glob>`, `table:<glob>`.' })

export const EffectivePolicySchema = Type.Object({
  table: Type.String({ description: 'Dotted table name.' }),
  policy: Type.String({ description: 'Where the policy was loaded from.' }),
  scopes: Type.Array(Type.String(), { description: 'Scopes that apply, least specific first (the last one wins a conflict).' }),
  mode: Type.Object({ value: Type.Union([Type.Literal('enforce'), Type.Literal('warn'), Type.Literal('freeze')]), source: Source }, { additionalProperties: false }),
  compatibility: Type.Object({ value: Type.String(), source: Source }, { additionalProperties: false }),
  rules: Type.Array(Type.Object({
    rule: ref(RuleIdSchema),
    severity: Type.Union([Type.Literal('error'), Type.Literal('warn'), Type.Literal('off')]),
    source: Source,
    options: Type.Record(Type.String(), Type.Unknown()),
    'option-sources': Type.Record(Type.String(), Type.String())
  }, { additionalProperties: false })),
  exceptions: Type.Array(Type.Object({
    rules: Type.Array(Type.String()),
    table: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
    expires: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    source: Source,
    active: Type.Boolean({ description: 'false once expired: listed so operators see it lapsed.' })
  }, { additionalProperties: false })),
  contract: Type.Optional(Type.Object({
    file: Type.String(),
    source: Source,
    strict: Type.Boolean(),
    columns: Type.Integer({ description: 'Number of columns the contract lists.' })
  }, { additionalProperties: false }))
}, { $id: 'EffectivePolicy', additionalProperties: false })

export const PolicyReloadSchema = Type.Object({
  reloaded: Type.Literal(true),
  policy: Type.String({ description: 'Where the policy was loaded from.' }),
  scopes: Type.Integer({ description: 'Number of scopes in the loaded policy.' })
}, { $id: 'PolicyReload', additionalProperties: false })

export type EffectivePolicyWire = Static<typeof EffectivePolicySchema>

export function effectivePolicyToWire (e: PolicyExplanation): EffectivePolicyWire {
  return {
    table: e.table,
    policy: e.policy,
    scopes: [...e.scopes],
    mode: { value: e.mode.value, source: e.mode.source },
    compatibility: { value: e.compatibility.value, source: e.compatibility.source },
    rules: Object.entries(e.rules).map(([rule, r]) => ({
      rule,
      severity: r.severity,
      source: r.source,
      options: { ...r.options },
      'option-sources': { ...r.optionSources }
    })),
    exceptions: e.exceptions.map(x => ({ ...x, rules: [...x.rules] })),
    ...(e.contract !== undefined && { contract: { ...e.contract } })
  }
}
