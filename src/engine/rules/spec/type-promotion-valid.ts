import { typeToString } from '../../../iceberg/print.js'
import { isPromotionAllowed } from '../../../iceberg/promotion.js'
import type { PrimitiveType } from '../../../iceberg/types.js'
import type { Rule, Violation } from '../rule.js'
import { EVOLUTION_FLOWS, mapKeyTest, subject } from './helpers.js'

/**
 * A primitive changes type only by a promotion the spec allows for the table's format version
 * (spec "Schema Evolution"): v1/v2 int→long, float→double, decimal(P,S)→decimal(P',S) with P'>P;
 * v3 adds date→timestamp/timestamp_ns and unknown→any primitive. Old data files keep their physical type,
 * so any other change makes them unreadable or silently wrong. Map keys are MAP_KEY_UNCHANGED's.
 */
export const typePromotionValid: Rule = {
  id: 'TYPE_PROMOTION_VALID',
  category: 'spec',
  purpose: 'A column changes type only by a promotion the Iceberg spec allows for the table format version.',
  defaultSeverity: 'error',
  flows: EVOLUTION_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    const v = ctx.proposed.formatVersion
    const inKey = ctx.baseSchema === undefined ? () => false : mapKeyTest(ctx.baseSchema)
    for (const c of ctx.changes) {
      if (c.kind !== 'type-changed' || inKey(c.fieldId)) continue
      const from = c.from as PrimitiveType
      const to = c.to as PrimitiveType
      if (isPromotionAllowed(from, to, v)) continue
      const oldType = typeToString(from)
      const newType = typeToString(to)
      const laterVersion = v < 3 && isPromotionAllowed(from, to, 3)
      out.push({
        rule: 'TYPE_PROMOTION_VALID',
        message: `Cannot change column type: ${subject(c.path, c.fieldId)}: ${oldType} -> ${newType}` +
          (laterVersion ? ` (allowed only on format version 3; this table is v${v})` : ''),
        fieldId: c.fieldId,
        path: c.path,
        oldType,
        newType,
        explanation: laterVersion
          ? 'Upgrade the table to format version 3 in the same commit, or add a new column.'
          : 'Allowed promotions: int -> long, float -> double, decimal(P, S) -> decimal(P2, S) with P2 > P (v3 adds date -> timestamp/timestamp_ns and unknown -> any primitive type). Add a new column and backfill it instead.'
      })
    }
    return out
  }
}
