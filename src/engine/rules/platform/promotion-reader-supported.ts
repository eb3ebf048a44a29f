import { Type } from '@sinclair/typebox'
import { typeToString } from '../../../iceberg/print.js'
import type { IcebergType } from '../../../iceberg/types.js'
import type { PlatformRule } from './platform-rule.js'
import { changesOf, stringListOption } from './support.js'

/**
 * The spec's v3 promotions (`date → timestamp/timestamp_ns`, `unknown → any`; spec "Schema
 * Evolution") are legal, but the Java library does not implement them as of 1.11
 * (`TypeUtil.isPromotionAllowed` has no DATE or UNKNOWN case; apache/iceberg #14265, #16083, PR
 * #17744), and neither do the engines built on it. A table whose readers include those engines must
 * not use them yet.
 */

/** Engines a policy can name, and what they read Iceberg with. */
const ENGINES: Readonly<Record<string, string>> = {
  java: 'the Iceberg Java library',
  spark: 'Spark (Iceberg Java library)',
  flink: 'Flink (Iceberg Java library)',
  hive: 'Hive (Iceberg Java library)',
  trino: 'Trino (Iceberg Java library for metadata)',
  presto: 'Presto (Iceberg Java library for metadata)',
  pyiceberg: 'PyIceberg',
  'iceberg-rust': 'iceberg-rust',
  'iceberg-go': 'iceberg-go',
  duckdb: 'DuckDB iceberg extension'
}

/**
 * First engine version known to read each v3 promotion. Empty: no engine is known to yet, so every
 * named engine is flagged until this table records a release (fail closed: a wrong "yes" makes a
 * table unreadable, a wrong "no" costs an exception entry).
 */
const KNOWN_SUPPORT: Readonly<Record<'date-to-timestamp' | 'unknown-to-any', Readonly<Record<string, string>>>> = {
  'date-to-timestamp': {},
  'unknown-to-any': {}
}

/** Last version checked for each engine, for the message. */
const CHECKED_THROUGH: Readonly<Record<string, string>> = { java: '1.11', spark: 'Iceberg 1.11', flink: 'Iceberg 1.11', hive: 'Iceberg 1.11' }

function v3Promotion (from: IcebergType, to: IcebergType): 'date-to-timestamp' | 'unknown-to-any' | undefined {
  if (from.kind === 'date' && (to.kind === 'timestamp' || to.kind === 'timestamp_ns')) return 'date-to-timestamp'
  if (from.kind === 'unknown') return 'unknown-to-any'
  return undefined
}

function compareVersions (a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

function parseEngine (spec: string): { name: string, version?: string } {
  const [name, version] = spec.split('@') as [string, string | undefined]
  return version === undefined ? { name: name.toLowerCase() } : { name: name.toLowerCase(), version }
}

export const PROMOTION_READER_SUPPORTED: PlatformRule = {
  id: 'PROMOTION_READER_SUPPORTED',
  category: 'platform',
  purpose: 'Refuses type promotions the table\'s declared reader engines cannot read yet (the v3 date→timestamp and unknown→any).',
  defaultSeverity: 'error',
  optionsSchema: Type.Object({
    engines: Type.Array(Type.String({ pattern: '^[A-Za-z-]+(@[0-9]+(\\.[0-9]+)*)?$' }), {
      description: `Engines the table must stay readable by, optionally with a version (\`java@1.11\`). Known: ${Object.keys(ENGINES).join(', ')}. Default [java]; [] turns the check off.`
    })
  }),
  validateOptions (options) {
    const engines = options.engines
    if (!Array.isArray(engines)) return []
    return engines
      .filter((e): e is string => typeof e === 'string' && ENGINES[parseEngine(e).name] === undefined)
      .map(e => ({ key: 'engines', message: `unknown engine "${e}"; known: ${Object.keys(ENGINES).join(', ')}` }))
  },
  * check (ctx) {
    const engines = stringListOption(ctx.options, 'engines', ['java']).map(parseEngine)
    if (engines.length === 0) return
    for (const c of changesOf(ctx.changes, 'type-changed')) {
      const promotion = v3Promotion(c.from, c.to)
      if (promotion === undefined) continue
      const blocked = engines.filter(e => {
        const since = KNOWN_SUPPORT[promotion][e.name]
        return since === undefined || e.version === undefined || compareVersions(e.version, since) < 0
      })
      if (blocked.length === 0) continue
      const names = blocked.map(e => `${e.name}${e.version ? '@' + e.version : ''}${CHECKED_THROUGH[e.name] ? ` (checked through ${CHECKED_THROUGH[e.name]})` : ''}`).join(', ')
      const from = typeToString(c.from)
      const to = typeToString(c.to)
      yield {
        rule: this.id,
        message: `Cannot promote column ${c.path} (id ${c.fieldId}) from ${from} to ${to}: the table's readers cannot read this promotion yet: ${names}`,
        fieldId: c.fieldId,
        path: c.path,
        oldType: from,
        newType: to,
        explanation: `The Iceberg spec allows ${from} → ${to} on format version 3, but ${blocked.map(e => ENGINES[e.name] ?? e.name).join(', ')} does not implement it (Java TypeUtil.isPromotionAllowed has no such case as of 1.11), so reading old data files under the new type fails. Add a new column of the new type and backfill it instead, or remove these engines from the rule's \`engines\` option once they support it.`
      }
    }
  }
}
