/** `GET /admin/v1/rules`: the rule catalogue, like `buf config ls-breaking-rules`. */
import { Type, type Static } from '@sinclair/typebox'
import { RuleIdSchema } from './finding.js'
import { ref } from './ref.js'

export const RuleInfoSchema = Type.Object({
  id: ref(RuleIdSchema),
  category: Type.Union([Type.Literal('spec'), Type.Literal('platform')], { description: 'spec: the Iceberg spec, always on. platform: the policy decides.' }),
  'default-severity': Type.Union([Type.Literal('error'), Type.Literal('warn'), Type.Literal('off')]),
  purpose: Type.String(),
  doc: Type.String({ description: 'Where the rule is documented: why it exists, an example that trips it, what to do instead.' })
}, { $id: 'RuleInfo', additionalProperties: false })

export const RuleCatalogueSchema = Type.Object({
  rules: Type.Array(ref(RuleInfoSchema))
}, { $id: 'RuleCatalogue', additionalProperties: false })

export type RuleCatalogue = Static<typeof RuleCatalogueSchema>
