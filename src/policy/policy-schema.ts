/**
 * The policy file's shape, defined once. The loader validates with it, `Static` gives the type,
 * and `scripts/gen-policy-schema.ts` writes it to `openapi/policy.schema.json` for editors.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { PLATFORM_RULES } from '../engine/rules/platform/index.js'
import { ContractSchema } from './contract-schema.js'

export const SeveritySchema = Type.Union([Type.Literal('error'), Type.Literal('warn'), Type.Literal('off')], {
  description: 'error: the finding denies the commit (in enforce mode); warn: reported, forwarded; off: not checked.'
})

const ModeSchema = Type.Union([Type.Literal('enforce'), Type.Literal('warn'), Type.Literal('freeze')], {
  description: 'enforce: errors deny. warn: everything is forwarded and every finding reported as a warning. freeze: any schema, partition-spec or sort-order change is refused; data commits pass.'
})

export const COMPATIBILITY_LEVELS = ['NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'] as const
export type CompatibilityLevel = typeof COMPATIBILITY_LEVELS[number]

const CompatibilitySchema = Type.Union(COMPATIBILITY_LEVELS.map(l => Type.Literal(l)), {
  description: 'Schema-registry compatibility level, defined for Iceberg in docs/policy.md. _TRANSITIVE forms check against every schema in the table history.'
})

export const PRESETS = ['builtin:spec', 'builtin:recommended'] as const
export type PresetName = typeof PRESETS[number]

function ruleEntry (optionProps: Record<string, TSchema>, description: string): TSchema {
  return Type.Union([
    SeveritySchema,
    Type.Object({ severity: Type.Optional(SeveritySchema), ...optionProps }, { additionalProperties: false })
  ], { description })
}

const ruleProps: Record<string, TSchema> = {}
for (const rule of PLATFORM_RULES) {
  const props: Record<string, TSchema> = {}
  for (const [k, v] of Object.entries(rule.optionsSchema?.properties ?? {})) props[k] = Type.Optional(v)
  ruleProps[rule.id] = Type.Optional(ruleEntry(props, rule.purpose))
}

const RulesSchema = Type.Object(ruleProps, {
  // Spec rules (and any rule without options) take the shorthand or `{ severity }`.
  additionalProperties: ruleEntry({}, 'A rule id with its severity.'),
  description: 'Rule id → severity, or an object with `severity` and the rule\'s options.'
})

const ExceptionSchema = Type.Object({
  rules: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], {
    description: 'Rule id, list of rule ids, or "*" for every rule the policy can switch off.'
  }),
  table: Type.Optional(Type.String({ minLength: 1, description: 'Table glob, `db.orders` or `staging.*`; default: every table the scope covers.' })),
  path: Type.Optional(Type.String({ minLength: 1, description: 'Field path (dotted); the exception covers this field and everything nested in it.' })),
  expires: Type.Optional(Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}([Tt ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?([Zz]|[+-]\\d{2}:\\d{2})?)?$',
    description: 'ISO date or date-time (UTC when no offset); a date means the exception stops applying at 00:00 UTC that day.'
  })),
  reason: Type.Optional(Type.String({ description: 'Why; shown in the effective policy and in findings.' }))
}, { additionalProperties: false })

const WebhookSchema = Type.Object({
  url: Type.String({ pattern: '^https?://', description: 'Receives CloudEvents (JSON) for the decisions of this scope\'s tables.' }),
  // Only webhook secrets: a policy naming ICEGUARD_ADMIN_TOKEN (or any other secret of the process)
  // would have iceguard sign bodies with it, and every signed body would be an offline guessing
  // oracle for that secret (docs/security.md).
  'secret-env': Type.Optional(Type.String({ pattern: '^ICEGUARD_WEBHOOK_[A-Za-z0-9_]+$', description: 'Environment variable holding the HMAC secret that signs the body (X-Iceguard-Signature); the secret stays out of the file. Only variables named ICEGUARD_WEBHOOK_… may be named.' })),
  events: Type.Optional(Type.Array(Type.Union([Type.Literal('denied'), Type.Literal('warned'), Type.Literal('overridden')]), {
    minItems: 1, description: 'Events to send; default all three.'
  }))
}, { additionalProperties: false })

export const ScopeSettingsSchema = Type.Object({
  mode: Type.Optional(ModeSchema),
  compatibility: Type.Optional(CompatibilitySchema),
  rules: Type.Optional(RulesSchema),
  exceptions: Type.Optional(Type.Array(ExceptionSchema)),
  contract: Type.Optional(Type.Union([
    Type.String({ minLength: 1, description: 'Path of a contract YAML file, relative to the policy file.' }),
    ContractSchema
  ], { description: 'Schema contract: a file path or an inline contract.' })),
  webhooks: Type.Optional(Type.Array(WebhookSchema, {
    description: 'Endpoints told about denied, warned and overridden decisions on this scope\'s tables (besides ICEGUARD_WEBHOOK_URL); every matching scope\'s endpoints are used.'
  }))
}, { additionalProperties: false })

export const PolicySchema = Type.Object({
  version: Type.Literal(1, { description: 'Policy format version.' }),
  extends: Type.Optional(Type.Union(PRESETS.map(p => Type.Literal(p)), {
    description: 'Preset the file starts from; default builtin:recommended.'
  })),
  ...ScopeSettingsSchema.properties,
  namespaces: Type.Optional(Type.Record(Type.String(), ScopeSettingsSchema, {
    description: 'Namespace glob (`finance`, `finance.eu`, `staging.*`, `*_raw`) → settings; applies to nested namespaces too.'
  })),
  tables: Type.Optional(Type.Record(Type.String(), ScopeSettingsSchema, {
    description: 'Table glob (`finance.orders`, `staging.*`, `**.events`) → settings.'
  }))
}, {
  additionalProperties: false,
  $id: 'policy.schema.json',
  title: 'iceguard policy'
})

export type PolicyFile = Static<typeof PolicySchema>
export type ScopeSettingsFile = Static<typeof ScopeSettingsSchema>
export type RuleSeveritySetting = Static<typeof SeveritySchema>
