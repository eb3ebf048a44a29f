/**
 * Reads a policy file: YAML → PolicySchema check → semantic checks (rule ids, option values,
 * globs, contract files) → Policy. Every problem is collected with file, line and column, so an
 * operator fixes the file in one pass (buf and Atlas report all findings, not the first).
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ALL_RULES, ruleById } from '../engine/rules/index.js'
import type { PlatformRule } from '../engine/rules/platform/platform-rule.js'
import { contractFromYaml, parseContract, type Contract } from './contract.js'
import { PolicyError } from './policy-error.js'
import { PolicySchema, type PolicyFile, type RuleSeveritySetting, type ScopeSettingsFile } from './policy-schema.js'
import type { Policy, PolicyException, PolicyScope, RuleSetting, ScopeSettings } from './policy.js'
import { DEFAULT_PRESET, isPresetName, presetPolicy, presetScope } from './presets.js'
import type { PresetName } from './policy-schema.js'
import { schemaIssues, sortIssues } from './schema-issues.js'
import { splitDotted } from '../engine/rules/path-glob.js'
import { readYaml, type PolicyIssue, type YamlSource } from './yaml-source.js'
import { isObject } from '../iceberg/json-values.js'

const checkPolicy = TypeCompiler.Compile(PolicySchema)

interface ParsePolicyOptions {
  /** Directory contract paths are relative to; default: the directory of `source`. */
  readonly baseDir?: string
  /** Reads a contract file (tests inject one); default: fs.readFileSync. */
  readonly readFile?: (path: string) => string
}

export function parsePolicy (text: string, source: string, opts: ParsePolicyOptions = {}): { policy?: Policy, errors: PolicyIssue[] } {
  const y = readYaml(text, source)
  if (y.issues.length > 0) return { errors: y.issues }
  if (y.value === null || y.value === undefined || typeof y.value !== 'object' || Array.isArray(y.value)) {
    return { errors: [y.at([], 'Cannot read policy: expected a mapping with at least `version: 1`')] }
  }
  // Schema problems and semantic ones (unknown rule ids, bad regexes, missing contract files) are
  // collected together; the semantic pass skips whatever the schema already found malformed.
  const errors = schemaIssues(y, [], checkPolicy.Errors(y.value))
  const file = y.value as PolicyFile
  const ctx: Ctx = { y, errors, baseDir: opts.baseDir ?? dirname(source), readFile: opts.readFile ?? (p => readFileSync(p, 'utf8')) }

  const base = isPresetName(String(file.extends)) ? file.extends as PresetName : DEFAULT_PRESET
  const scopes: PolicyScope[] = [presetScope(base)]
  scopes.push({ kind: 'global', pattern: '', label: 'global', settings: scopeSettings(ctx, [], file) })
  for (const key of y.keysAt(['namespaces'])) {
    const segs = splitDotted(key)
    if (key === '' || segs.some(s => s === '')) errors.push(y.at(['namespaces', key], `namespaces.${key}: a namespace glob needs non-empty dot-separated levels`, true))
    scopes.push({ kind: 'namespace', pattern: key, label: `namespace:${key}`, settings: scopeSettings(ctx, ['namespaces', key], file.namespaces?.[key]) })
  }
  for (const key of y.keysAt(['tables'])) {
    const segs = splitDotted(key)
    if (segs.length < 2 || segs.some(s => s === '')) errors.push(y.at(['tables', key], `tables.${key}: a table glob is namespace.table, e.g. finance.orders or staging.*`, true))
    scopes.push({ kind: 'table', pattern: key, label: `table:${key}`, settings: scopeSettings(ctx, ['tables', key], file.tables?.[key]) })
  }
  if (errors.length > 0) return { errors: sortIssues(errors) }
  return { policy: { source, extends: base, scopes }, errors }
}

interface Ctx {
  readonly y: YamlSource
  readonly errors: PolicyIssue[]
  readonly baseDir: string
  readonly readFile: (path: string) => string
}

function scopeSettings (ctx: Ctx, at: readonly string[], raw: unknown): ScopeSettings {
  const { y, errors } = ctx
  const s = (isObject(raw) ? raw : {}) as ScopeSettingsFile
  const rules: Record<string, RuleSetting> = {}
  for (const [id, entry] of Object.entries(isObject(s.rules) ? s.rules : {})) {
    const rule = ruleById(id)
    if (rule === undefined) {
      errors.push(y.at([...at, 'rules', id], `${[...at, 'rules', id].join('.')}: unknown rule id${suggest(id)}`, true))
      continue
    }
    if (typeof entry === 'string') { rules[id] = { severity: entry as RuleSeveritySetting }; continue }
    if (!isObject(entry)) continue
    const { severity, ...options } = entry as { severity?: 'error' | 'warn' | 'off' } & Record<string, unknown>
    for (const problem of (rule as Partial<PlatformRule>).validateOptions?.(options) ?? []) {
      errors.push(y.at([...at, 'rules', id, problem.key], `${[...at, 'rules', id, problem.key].join('.')}: ${problem.message}`))
    }
    rules[id] = { ...(severity !== undefined && { severity }), ...(Object.keys(options).length > 0 && { options }) }
  }
  const exceptions: PolicyException[] = []
  ;(Array.isArray(s.exceptions) ? s.exceptions : []).forEach((e, i) => {
    if (!isObject(e)) return
    const ids = typeof e.rules === 'string' ? [e.rules] : Array.isArray(e.rules) ? e.rules.filter(r => typeof r === 'string') : []
    for (const id of ids) {
      if (id !== '*' && !ruleById(id)) errors.push(y.at([...at, 'exceptions', i, 'rules'], `${[...at, 'exceptions', i].join('.')}: unknown rule id ${id}${suggest(id)}`))
    }
    if (typeof e.table === 'string' && splitDotted(e.table).length < 2) {
      errors.push(y.at([...at, 'exceptions', i, 'table'], `${[...at, 'exceptions', i, 'table'].join('.')}: a table glob is namespace.table`))
    }
    let expires: Date | undefined
    if (typeof e.expires === 'string') {
      // A bare date or a date-time without offset is read as UTC, so the policy means the same on every host.
      const iso = /^\d{4}-\d{2}-\d{2}$/.test(e.expires) ? `${e.expires}T00:00:00Z` : /([Zz]|[+-]\d{2}:\d{2})$/.test(e.expires) ? e.expires : `${e.expires}Z`
      expires = new Date(iso.replace(' ', 'T'))
      if (Number.isNaN(expires.getTime())) errors.push(y.at([...at, 'exceptions', i, 'expires'], `${[...at, 'exceptions', i, 'expires'].join('.')}: not a valid date: ${e.expires}`))
    }
    exceptions.push({
      rules: ids,
      ...(e.table !== undefined && { table: e.table }),
      ...(e.path !== undefined && { path: e.path }),
      ...(expires !== undefined && { expires, expiresText: e.expires }),
      ...(e.reason !== undefined && { reason: e.reason })
    })
  })
  const contract = typeof s.contract === 'string' || isObject(s.contract) ? readContract(ctx, [...at, 'contract'], s.contract) : undefined
  return {
    ...(s.mode !== undefined && { mode: s.mode }),
    ...(s.compatibility !== undefined && { compatibility: s.compatibility }),
    rules,
    exceptions,
    ...(contract !== undefined && { contract }),
    ...(Array.isArray(s.webhooks) && {
      webhooks: s.webhooks.map(w => ({ url: w.url, ...(w['secret-env'] !== undefined && { secretEnv: w['secret-env'] }), ...(w.events !== undefined && { events: w.events }) }))
    })
  }
}

function readContract (ctx: Ctx, at: readonly string[], value: unknown): Contract | undefined {
  if (typeof value !== 'string') {
    const { contract, errors } = contractFromYaml(ctx.y, at, value, 'inline')
    ctx.errors.push(...errors)
    return contract
  }
  const path = resolve(ctx.baseDir, value)
  let text: string
  try {
    text = ctx.readFile(path)
  } catch (err) {
    ctx.errors.push(ctx.y.at(at, `${at.join('.')}: cannot read contract file ${value}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`))
    return undefined
  }
  const { contract, errors } = parseContract(text, value)
  ctx.errors.push(...errors)
  return contract
}

/** ` (did you mean COLUMN_NO_DROP?)` for a near miss of a rule id, or ''. */
export function suggest (id: string): string {
  const candidates = ALL_RULES.map(r => r.id)
  let best: string | undefined
  let bestD = Infinity
  for (const c of candidates) {
    const d = distance(id.toUpperCase(), c)
    if (d < bestD) { bestD = d; best = c }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(id.length / 4)) ? ` (did you mean ${best}?)` : ''
}

function distance (a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0] as number
    dp[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j] as number
      dp[j] = Math.min((dp[j] as number) + 1, (dp[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = tmp
    }
  }
  return dp[b.length] as number
}

/** Reads and validates a policy file; throws a PolicyError carrying every problem with its line and column. */
export function loadPolicyFile (path: string, opts: ParsePolicyOptions = {}): Policy {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new PolicyError(path, [{ source: path, line: 1, column: 1, path: '', message: `Cannot read policy file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }])
  }
  const { policy, errors } = parsePolicy(text, path, opts)
  if (!policy) throw new PolicyError(path, errors)
  return policy
}

/** `builtin:spec`, `builtin:recommended`, or a file path (what `--policy` / `ICEGUARD_POLICY` take). */
export function loadPolicy (spec: string | undefined): Policy {
  if (spec === undefined || spec === '') return presetPolicy(DEFAULT_PRESET)
  if (isPresetName(spec)) return presetPolicy(spec)
  if (spec.startsWith('builtin:')) {
    throw new PolicyError(spec, [{ source: spec, line: 1, column: 1, path: '', message: `Unknown preset ${spec}: use builtin:spec or builtin:recommended` }])
  }
  return loadPolicyFile(spec)
}
