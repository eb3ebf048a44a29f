/**
 * A platform rule: the Rule contract plus the shape of its options, so that the policy file's
 * JSON Schema can describe each rule's options and the loader can point at a bad one.
 */
import type { TObject } from '@sinclair/typebox'
import type { Rule } from '../rule.js'

export interface PlatformRule extends Rule {
  readonly category: 'platform'
  /** Options accepted under `rules: { ID: { … } }`; absent when the rule takes none. */
  readonly optionsSchema?: TObject
  /** Checks beyond the schema (a regex that must compile); `key` names the offending option. */
  validateOptions? (options: Readonly<Record<string, unknown>>): Array<{ key: string, message: string }>
}
