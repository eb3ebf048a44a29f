/**
 * Where `npm run interop:setup` put the pinned interop toolchain (interop/README.md), and whether it
 * is there. A suite asks `toolchainSkip(parts)` for its `t.test(name, { skip }, …)`: on a developer
 * machine without the toolchain the suite is skipped with the command that installs it; under CI
 * (`CI` set) a missing part fails the suite instead, so CI never passes by skipping.
 */
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { inCi } from '../../helpers/system-tool.js'

export const cacheDir = process.env.ICEGUARD_INTEROP_CACHE ?? join(homedir(), '.cache', 'iceguard-interop')

/** The repository's `interop/` folder (pins, the catalog test module, the Python drivers). */
export const interopDir = new URL('../../../interop/', import.meta.url).pathname

/** `java -cp` value that runs org.apache.iceberg.rest.RESTCatalogServer. */
export const fixtureClasspath = join(cacheDir, 'fixture-lib', '*')

/** The virtualenv's interpreter (pyiceberg, pyspark, duckdb and its extensions). */
export const python = join(cacheDir, 'venv', 'bin', 'python')

/** The Iceberg Spark runtime jar named in interop/spark/runtime.txt (absolute, for spark.jars). */
export function sparkRuntimeJar (): string {
  const coordinate = readFileSync(join(interopDir, 'spark', 'runtime.txt'), 'utf8')
    .split('\n').find(line => line.trim() !== '' && !line.startsWith('#')) ?? ''
  const [, artifact, version] = coordinate.trim().split(':')
  return join(cacheDir, 'jars', `${artifact}-${version}.jar`)
}

export type ToolchainPart = 'java' | 'fixture' | 'python' | 'spark'

function has (path: string, mode = constants.R_OK): boolean {
  try {
    accessSync(path, mode)
    return true
  } catch {
    return false
  }
}

/** The parts of `parts` that are not installed, in words. */
export function missingParts (parts: readonly ToolchainPart[]): string[] {
  const missing: string[] = []
  for (const part of parts) {
    if (part === 'java' && !onPath('java')) missing.push('java')
    if (part === 'fixture' && !(has(join(cacheDir, 'fixture-lib')) && readdirSync(join(cacheDir, 'fixture-lib')).some(f => f.startsWith('iceberg-open-api')))) missing.push('the Iceberg REST fixture')
    if (part === 'python' && !has(python, constants.X_OK)) missing.push('the Python virtualenv')
    if (part === 'spark' && !has(sparkRuntimeJar())) missing.push('the Iceberg Spark runtime jar')
  }
  return missing
}

function onPath (name: string): boolean {
  return (process.env.PATH ?? '').split(':').some(dir => dir !== '' && has(join(dir, name), constants.X_OK))
}

/** For `t.test(name, { skip: toolchainSkip([...]) }, …)`: the reason to skip, or false. */
export function toolchainSkip (parts: readonly ToolchainPart[]): string | false {
  const missing = missingParts(parts)
  if (missing.length === 0 || inCi()) return false
  return `${missing.join(', ')} not installed: run \`npm run interop:setup\` (interop/README.md); required when CI is set`
}

/** Inside a suite: fails it when a part is missing (only reached under CI, where nothing skips). */
export function needToolchain (t: Test, parts: readonly ToolchainPart[]): boolean {
  const missing = missingParts(parts)
  if (missing.length === 0) return true
  t.fail(`${missing.join(', ')} missing under CI: run \`npm run interop:setup\``)
  return false
}
