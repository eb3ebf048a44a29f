/**
 * Type promotion by format version: the table in spec "Schema Evolution".
 *
 * This is the write-time evolution table, deliberately not pyiceberg's `promote()` (an Avro
 * read-resolution table that allows string↔binary) and ahead of Java's `TypeUtil.isPromotionAllowed`
 * (no v3 cases yet).
 */
import { samePrimitive } from './type-equality.js'
import type { IcebergType, PrimitiveType } from './types.js'

export type FormatVersion = 1 | 2 | 3

/** Primitive kinds that need format version 3 (spec Appendix E; Java `Schema.checkCompatibility`). */
export const V3_ONLY_TYPES: ReadonlySet<PrimitiveType['kind']> = new Set<PrimitiveType['kind']>([
  'timestamp_ns', 'timestamptz_ns', 'unknown', 'variant', 'geometry', 'geography'
])

/** Whether `from` may evolve to `to` on a table of this format version. Equal types are allowed (no change). */
export function isPromotionAllowed (from: PrimitiveType, to: PrimitiveType, formatVersion: FormatVersion): boolean {
  if (samePrimitive(from, to)) return true
  switch (from.kind) {
    case 'int': return to.kind === 'long'
    case 'float': return to.kind === 'double'
    // "Widen precision only": the scale never changes.
    case 'decimal': return to.kind === 'decimal' && to.scale === from.scale && to.precision > from.precision
    // v3: date → timestamp/timestamp_ns, never to the tz variants (values have no zone).
    case 'date': return formatVersion >= 3 && (to.kind === 'timestamp' || to.kind === 'timestamp_ns')
    // v3: a column of unknown type holds only nulls, so any primitive type can take its place
    // (a nested one cannot: FIELD_KIND_STABLE).
    case 'unknown': return formatVersion >= 3
    default: return false
  }
}

/** The minimum format version a type needs: 3 when it or any nested type is v3-only. */
export function minFormatVersion (t: IcebergType): FormatVersion {
  const stack: IcebergType[] = [t]
  while (stack.length > 0) {
    const x = stack.pop() as IcebergType
    if (x.kind === 'struct') for (const f of x.fields) stack.push(f.type)
    else if (x.kind === 'list') stack.push(x.element)
    else if (x.kind === 'map') stack.push(x.key, x.value)
    else if (V3_ONLY_TYPES.has(x.kind)) return 3
  }
  return 1
}
