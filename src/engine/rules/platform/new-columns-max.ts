import { Type } from '@sinclair/typebox'
import type { PlatformRule } from './platform-rule.js'
import { addedFields, isPseudoField, numberOption } from './support.js'

const DEFAULT_NEW_COLUMNS_MAX = 50

/**
 * An auto-evolving writer (Kafka Connect, Flink dynamic sink, `mergeSchema`) that meets a malformed
 * batch can add hundreds of columns in one commit; a cap per commit stops it (anchors §6 item 16).
 */
export const NEW_COLUMNS_MAX: PlatformRule = {
  id: 'NEW_COLUMNS_MAX',
  category: 'platform',
  purpose: 'Limits how many columns one commit may add (nested ones included).',
  defaultSeverity: 'off',
  flows: ['update', 'replace'],
  optionsSchema: Type.Object({
    max: Type.Integer({ minimum: 0, description: `Most columns one commit may add. Default ${DEFAULT_NEW_COLUMNS_MAX}.` })
  }),
  * check (ctx) {
    const max = numberOption(ctx.options, 'max', DEFAULT_NEW_COLUMNS_MAX)
    const added = addedFields(ctx).filter(f => !isPseudoField(f))
    if (added.length <= max) return
    const sample = added.slice(0, 5).map(f => f.path).join(', ')
    yield {
      rule: this.id,
      message: `Cannot add ${added.length} columns in one commit: the policy allows at most ${max} (${sample}${added.length > 5 ? ', …' : ''})`,
      explanation: 'Check the writer before raising the limit: automatic schema evolution that meets a malformed batch adds one column per stray key.'
    }
  }
}
