/**
 * Checks that need a program from outside npm (Chromium, docker-compose). On a developer machine
 * without it the check is skipped, and the skip names the program and how to install it; under CI
 * (`CI` set, as `.ci/run` sets it) a missing program fails the check, so CI never passes by skipping.
 */
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { Test } from 'tap'

export interface SystemTool {
  /** Where the program is, when it is installed. */
  readonly path: string | undefined
  /** For `t.test(name, { skip }, …)`: the reason to skip, or false when the check must run. */
  readonly skip: string | false
  /** Inside the check: the program's path, or undefined after failing the test (CI without it). */
  need (t: Test): string | undefined
}

/** `CI` counts as set unless empty, `0` or `false`. */
export function inCi (env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false'
}

/** The first of `names` that is an executable file in a PATH directory. */
export function findOnPath (names: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const name of names) {
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir === '') continue
      const candidate = join(dir, name)
      try {
        accessSync(candidate, constants.X_OK)
        return candidate
      } catch {}
    }
  }
  return undefined
}

/**
 * @param names  executable names to look for on PATH, preferred first
 * @param install how to get it, e.g. `apt-get install chromium`
 */
export function systemTool (names: readonly string[], install: string, env: NodeJS.ProcessEnv = process.env): SystemTool {
  const path = findOnPath(names, env)
  const missing = `${names[0]} is not installed (${install}); this check runs when it is, and is required when CI is set`
  return {
    path,
    skip: path === undefined && !inCi(env) ? missing : false,
    need (t) {
      if (path === undefined) t.fail(`${names[0]} is required when CI is set: ${install}`)
      return path
    }
  }
}
