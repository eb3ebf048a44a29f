/**
 * The loaded policy: scopes in file order, each with the settings it states. Nothing is merged
 * here; `resolvePolicy` merges per table, so the effective view can say where each value came from.
 */
import type { Contract } from '../contract/contract.js'
import type { CompatibilityLevel, RuleSeveritySetting } from './policy-schema.js'

export type PolicyMode = 'enforce' | 'warn' | 'freeze'

export interface RuleSetting {
  readonly severity?: RuleSeveritySetting
  readonly options?: Readonly<Record<string, unknown>>
}

export interface PolicyException {
  /** Rule ids, or ['*'] for every rule. */
  readonly rules: readonly string[]
  /** Table glob (segments), narrowing the scope's tables. */
  readonly table?: string
  readonly path?: string
  /** Instant the exception stops applying. */
  readonly expires?: Date
  readonly expiresText?: string
  readonly reason?: string
}

export interface ScopeSettings {
  readonly mode?: PolicyMode
  readonly compatibility?: CompatibilityLevel
  readonly rules: Readonly<Record<string, RuleSetting>>
  readonly exceptions: readonly PolicyException[]
  readonly contract?: Contract
  /** Webhook endpoints for this scope's decisions (src/decisions/webhooks.ts). */
  readonly webhooks?: ReadonlyArray<{ readonly url: string, readonly secretEnv?: string, readonly events?: ReadonlyArray<'denied' | 'warned' | 'overridden'> }>
}

export type ScopeKind = 'preset' | 'global' | 'namespace' | 'table'

export interface PolicyScope {
  readonly kind: ScopeKind
  /** The glob as written (`finance`, `staging.*`, `db.orders`); '' for preset and global. */
  readonly pattern: string
  /** Where a setting came from, in explanations: `builtin:recommended`, `global`, `namespace:finance`, `table:finance.orders`. */
  readonly label: string
  readonly settings: ScopeSettings
}

export interface Policy {
  /** File path, or the preset name. */
  readonly source: string
  readonly extends: 'builtin:spec' | 'builtin:recommended'
  /** Preset first, then the file's global scope, then namespaces and tables in file order. */
  readonly scopes: readonly PolicyScope[]
}
