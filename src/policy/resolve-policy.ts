/**
 * The effective policy of one table: every scope that applies, merged from least to most specific.
 *
 * Precedence (documented in docs/policy.md): preset < global < namespace < table. Among namespace
 * scopes the one matching a deeper namespace level wins; at equal depth the one with more literal
 * (glob-free) levels wins; at equal specificity the entry written later in the file wins. Tables
 * rank the same way by depth and literal levels. Each value is merged separately: a table scope
 * that sets only `mode` keeps the namespace's rule severities.
 */
import { ALL_RULES, ruleById } from '../engine/rules/index.js'
import type { RuleSettings, RuleSeverity } from '../engine/rules/rule.js'
import type { Contract } from '../contract/contract.js'
import type { CompatibilityLevel } from './policy-schema.js'
import type { Policy, PolicyException, PolicyMode, PolicyScope } from './policy.js'
import { literalSegments, matchSegments, namespaceMatchDepth, pathCovers, splitDotted } from '../engine/rules/path-glob.js'
import type { TableRef } from '../iceberg/rest-path.js'

/** A value and the scope label it came from (`builtin:recommended`, `global`, `namespace:finance`, `table:finance.orders`). */
export interface Sourced<T> {
  readonly value: T
  readonly source: string
}

export interface ExplainedRule {
  readonly severity: RuleSeverity
  readonly source: string
  readonly options: Readonly<Record<string, unknown>>
  /** Scope label per option key. */
  readonly optionSources: Readonly<Record<string, string>>
}

export interface ExplainedException {
  readonly rules: readonly string[]
  readonly path?: string
  readonly table?: string
  readonly expires?: string
  readonly reason?: string
  readonly source: string
  /** false once expired: listed so operators see it lapsed, but it no longer applies. */
  readonly active: boolean
}

export interface PolicyExplanation {
  readonly table: string
  readonly policy: string
  readonly scopes: readonly string[]
  readonly mode: Sourced<PolicyMode>
  readonly compatibility: Sourced<CompatibilityLevel>
  readonly rules: Readonly<Record<string, ExplainedRule>>
  readonly exceptions: readonly ExplainedException[]
  readonly contract?: { readonly file: string, readonly source: string, readonly strict: boolean, readonly columns: number }
}

export interface EffectivePolicy extends RuleSettings {
  readonly table: string
  readonly compatibility: CompatibilityLevel
  readonly contract?: Contract
  explain (): PolicyExplanation
}

interface Applicable {
  readonly scope: PolicyScope
  readonly key: readonly [number, number, number, number]
}

const RANK = { preset: 0, global: 1, namespace: 2, table: 3 } as const

function compareKeys (a: Applicable, b: Applicable): number {
  for (let i = 0; i < 4; i++) {
    const d = (a.key[i] as number) - (b.key[i] as number)
    if (d !== 0) return d
  }
  return 0
}

/** Scopes that apply to the table, least specific first (the last one wins a conflict). */
export function applicableScopes (policy: Policy, ident: TableRef): PolicyScope[] {
  const full = [...ident.namespace, ident.name]
  const out: Applicable[] = []
  policy.scopes.forEach((scope, order) => {
    if (scope.kind === 'preset' || scope.kind === 'global') {
      out.push({ scope, key: [RANK[scope.kind], 0, 0, order] })
      return
    }
    const glob = splitDotted(scope.pattern)
    if (scope.kind === 'namespace') {
      const depth = namespaceMatchDepth(glob, ident.namespace)
      if (depth > 0) out.push({ scope, key: [RANK.namespace, depth, literalSegments(glob), order] })
      return
    }
    if (matchSegments(glob, full)) out.push({ scope, key: [RANK.table, glob.length, literalSegments(glob), order] })
  })
  return out.sort(compareKeys).map(a => a.scope)
}

/** An exception stops applying at its expiry instant. */
function isExpired (e: PolicyException, now: Date): boolean {
  return e.expires !== undefined && now.getTime() >= e.expires.getTime()
}

export function resolvePolicy (policy: Policy, ident: TableRef, now: Date = new Date()): EffectivePolicy {
  const scopes = applicableScopes(policy, ident)
  const full = [...ident.namespace, ident.name]
  const table = full.join('.')

  let mode: Sourced<PolicyMode> = { value: 'enforce', source: 'default' }
  let compatibility: Sourced<CompatibilityLevel> = { value: 'NONE', source: 'default' }
  let contract: Sourced<Contract> | undefined
  const severities = new Map<string, Sourced<RuleSeverity>>()
  const options = new Map<string, Record<string, unknown>>()
  const optionSources = new Map<string, Record<string, string>>()
  const exceptions: Array<{ e: PolicyException, source: string }> = []

  for (const scope of scopes) {
    const s = scope.settings
    if (s.mode !== undefined) mode = { value: s.mode, source: scope.label }
    if (s.compatibility !== undefined) compatibility = { value: s.compatibility, source: scope.label }
    if (s.contract !== undefined) contract = { value: s.contract, source: scope.label }
    for (const [id, setting] of Object.entries(s.rules)) {
      if (setting.severity !== undefined) severities.set(id, { value: setting.severity, source: scope.label })
      if (setting.options !== undefined) {
        // Options merge key by key, so a table can change `max` without restating `pattern`.
        const merged = options.get(id) ?? {}
        const src = optionSources.get(id) ?? {}
        for (const [k, v] of Object.entries(setting.options)) { merged[k] = v; src[k] = scope.label }
        options.set(id, merged)
        optionSources.set(id, src)
      }
    }
    for (const e of s.exceptions) {
      if (e.table === undefined || matchSegments(splitDotted(e.table), full)) exceptions.push({ e, source: scope.label })
    }
  }

  const activeExceptions = exceptions.filter(x => !isExpired(x.e, now))

  const severityOf = (ruleId: string): RuleSeverity => {
    const set = severities.get(ruleId)
    if (set !== undefined) return set.value
    // Rules no scope mentions keep their default (spec rules: error); an id the registry does not
    // know is an engine rule added later, and a gate must fail closed.
    return ruleById(ruleId)?.defaultSeverity ?? 'error'
  }

  const optionsOf = (ruleId: string): Readonly<Record<string, unknown>> => {
    const base = options.get(ruleId) ?? {}
    if (ruleId === 'SCHEMA_CONTRACT' && contract !== undefined) return { ...base, contract: contract.value }
    if (ruleId === 'SCHEMA_COMPATIBILITY') return { ...base, level: compatibility.value }
    return base
  }

  return {
    table,
    mode: mode.value,
    compatibility: compatibility.value,
    ...(contract !== undefined && { contract: contract.value }),
    severity: severityOf,
    options: optionsOf,
    isExcepted (ruleId: string, path?: string): boolean {
      return activeExceptions.some(({ e }) =>
        (e.rules.includes('*') || e.rules.includes(ruleId)) &&
        (e.path === undefined || (path !== undefined && pathCovers(e.path, path))))
    },
    explain (): PolicyExplanation {
      const rules: Record<string, ExplainedRule> = {}
      for (const rule of ALL_RULES) {
        const opts = { ...optionsOf(rule.id) }
        const src = { ...optionSources.get(rule.id) }
        if (rule.id === 'SCHEMA_CONTRACT' && contract !== undefined) {
          // The parsed contract is large; the explanation names the file.
          opts.contract = contract.value.source
          src.contract = contract.source
        }
        if (rule.id === 'SCHEMA_COMPATIBILITY') src.level = compatibility.source
        rules[rule.id] = {
          severity: severityOf(rule.id),
          source: severities.get(rule.id)?.source ?? 'rule default',
          options: opts,
          optionSources: src
        }
      }
      return {
        table,
        policy: policy.source,
        scopes: scopes.map(s => s.label),
        mode,
        compatibility,
        rules,
        exceptions: exceptions.map(({ e, source }) => ({
          rules: e.rules,
          ...(e.table !== undefined && { table: e.table }),
          ...(e.path !== undefined && { path: e.path }),
          ...(e.expiresText !== undefined && { expires: e.expiresText }),
          ...(e.reason !== undefined && { reason: e.reason }),
          source,
          active: activeExceptions.some(a => a.e === e)
        })),
        ...(contract !== undefined && {
          contract: { file: contract.value.source, source: contract.source, strict: contract.value.strict, columns: contract.value.columns.length }
        })
      }
    }
  }
}
