/**
 * The rule catalogue: every spec rule and platform rule, looked up by id. The admin API and
 * docs/rules.md read `ruleCatalogue()`; each entry links to its section of the docs.
 */
import type { Rule, RuleCategory, RuleSeverity } from './rule.js'
import { PLATFORM_RULES } from './platform/index.js'
import { SPEC_RULE_LIST } from './spec/index.js'
import { TABLE_NO_REGISTER } from './platform/table-no-register.js'

/** The Iceberg spec's rules (category 'spec', default severity 'error'). */
export const SPEC_RULES: readonly Rule[] = SPEC_RULE_LIST

/** Spec rules first, then the platform team's rules, then the gate's registration setting. */
export const ALL_RULES: readonly Rule[] = [...SPEC_RULES, ...PLATFORM_RULES, TABLE_NO_REGISTER]

/**
 * Not a rule with a check: the finding `decide()` adds when a table in freeze mode receives a
 * schema, partition spec or sort order change.
 */
export const TABLE_FROZEN = 'TABLE_FROZEN'

interface RuleInfo {
  readonly id: string
  readonly category: RuleCategory
  readonly defaultSeverity: RuleSeverity
  readonly purpose: string
  /** The rule's page on iceguard: `/rules/<RULE_ID>`. */
  readonly doc: string
}

/**
 * Documentation link of a rule id: the page iceguard serves (`GET /rules/{RULE_ID}`, rendered from
 * docs/rules.md), under `base` (a public URL or the request's origin) or as a path on iceguard.
 */
export function ruleDoc (id: string, base = ''): string {
  return `${base}/rules/${id}`
}

/** Built on first use: asked once per rule for every commit (its default severity). */
let byId: ReadonlyMap<string, Rule> | undefined

export function ruleById (id: string): Rule | undefined {
  byId ??= new Map(ALL_RULES.map(r => [r.id, r]))
  return byId.get(id)
}

/** Every rule with its id, category, default severity, purpose and doc link, plus TABLE_FROZEN. */
export function ruleCatalogue (): RuleInfo[] {
  const out: RuleInfo[] = ALL_RULES.map(r => ({ id: r.id, category: r.category, defaultSeverity: r.defaultSeverity, purpose: r.purpose, doc: ruleDoc(r.id) }))
  if (!out.some(r => r.id === TABLE_FROZEN)) {
    out.push({
      id: TABLE_FROZEN,
      category: 'platform',
      defaultSeverity: 'error',
      purpose: 'A table in freeze mode accepts data commits only: no schema, partition spec or sort order change.',
      doc: ruleDoc(TABLE_FROZEN)
    })
  }
  return out
}
