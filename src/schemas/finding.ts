/**
 * Wire form of a rule finding (`src/engine/rules/rule.ts` `Finding`): kebab-case keys, the rule id from
 * the catalogue, and a link to the rule's documentation.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { Finding } from '../engine/rules/rule.js'
import { ruleCatalogue, ruleDoc } from '../engine/rules/index.js'
import { ref } from './ref.js'

/** Every rule id iceguard can report; the OpenAPI enum is generated from the rule catalogue. */
export const RuleIdSchema = Type.Unsafe<string>({
  $id: 'RuleId',
  type: 'string',
  enum: ruleCatalogue().map(r => r.id),
  description: 'A rule id, stable forever (UPPER_SNAKE, subject then predicate).'
})

export const SeveritySchema = Type.Union([Type.Literal('error'), Type.Literal('warn')], { $id: 'Severity' })

export const FindingSchema = Type.Object({
  rule: ref(RuleIdSchema),
  severity: ref(SeveritySchema),
  message: Type.String({ description: 'Stands alone: `Cannot <verb> <subject>: <detail>`.' }),
  'field-id': Type.Optional(Type.Integer()),
  path: Type.Optional(Type.String({ description: 'Dotted path of the field concerned.' })),
  'old-type': Type.Optional(Type.String()),
  'new-type': Type.Optional(Type.String()),
  explanation: Type.Optional(Type.String({ description: 'Why this matters and what to do instead.' })),
  overridden: Type.Optional(Type.Boolean({ description: 'true: an error that a verified break-glass override (X-Iceguard-Override) turned into this warning.' })),
  doc: Type.String({ description: 'The rule\'s page on iceguard, `/rules/{RULE_ID}` (an HTML page rendered from docs/rules.md).' })
}, { $id: 'Finding', additionalProperties: false })

export type WireFinding = Static<typeof FindingSchema>

/** Domain finding → wire finding. */
export function findingToWire (f: Finding): WireFinding {
  const out: WireFinding = { rule: f.rule, severity: f.severity, message: f.message, doc: ruleDoc(f.rule) }
  if (f.fieldId !== undefined) out['field-id'] = f.fieldId
  if (f.path !== undefined) out.path = f.path
  if (f.oldType !== undefined) out['old-type'] = f.oldType
  if (f.newType !== undefined) out['new-type'] = f.newType
  if (f.explanation !== undefined) out.explanation = f.explanation
  if (f.overridden === true) out.overridden = true
  return out
}
