/**
 * The two built-in presets. `builtin:spec` is the Iceberg spec alone: every platform rule off,
 * no compatibility level. `builtin:recommended` is what a careful platform team turns on, and what
 * applies when no policy is given: each platform rule at its `defaultSeverity` (the rule files are
 * the one place that number lives) and compatibility BACKWARD.
 */
import { PLATFORM_RULES } from '../engine/rules/platform/index.js'
import type { Policy, PolicyScope, RuleSetting } from './policy.js'
import type { PresetName } from './policy-schema.js'

export const DEFAULT_PRESET: PresetName = 'builtin:recommended'

export function isPresetName (s: string): s is PresetName {
  return s === 'builtin:spec' || s === 'builtin:recommended'
}

export function presetScope (name: PresetName): PolicyScope {
  const rules: Record<string, RuleSetting> = {}
  for (const rule of PLATFORM_RULES) {
    rules[rule.id] = { severity: name === 'builtin:spec' ? 'off' : rule.defaultSeverity }
  }
  return {
    kind: 'preset',
    pattern: '',
    label: name,
    settings: {
      mode: 'enforce',
      compatibility: name === 'builtin:spec' ? 'NONE' : 'BACKWARD',
      rules,
      exceptions: []
    }
  }
}

export function presetPolicy (name: PresetName): Policy {
  return { source: name, extends: name, scopes: [presetScope(name)] }
}
