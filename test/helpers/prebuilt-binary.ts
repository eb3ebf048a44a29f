/**
 * better-sqlite3's prebuilt binary, offered to the installs a test runs. Installing a package that
 * depends on better-sqlite3 runs its `install` script, `prebuild-install || node-gyp rebuild`:
 * prebuild-install fetches a prebuilt binary for this Node ABI and platform from the project's GitHub
 * release, and only when that fails does node-gyp compile SQLite from source (a minute or more of
 * CPU per install).
 *
 * Before downloading, prebuild-install looks in the folder `npm_config_<package>_local_prebuilds`
 * names for the file it would download, `<name>-v<version>-<runtime>-v<abi>-<platform><libc>-<arch>.tar.gz`
 * (node_modules/prebuild-install/util.js, `urlTemplate` and `localPrebuild`), a gzipped tar holding
 * `build/Release/better_sqlite3.node`. This packs the binary this checkout already built, of the
 * same version, under that name: what a CI job with a network gets from the release. An install that
 * resolves another version finds no file of its name and compiles, as it would without a network.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * Packs the prebuilt binary into `dir` and returns the environment that points prebuild-install there.
 * @param packageDir the installed better-sqlite3 (its package.json and build/Release)
 */
export async function offerPrebuild (packageDir: string, dir: string): Promise<Record<string, string>> {
  const { name, version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { name: string, version: string }
  // prebuild-install's libc is empty on glibc and "musl" on musl (prebuild-install/rc.js).
  const { header } = process.report.getReport() as { header: { glibcVersionRuntime?: string } }
  const libc = process.platform === 'linux' && header.glibcVersionRuntime === undefined ? 'musl' : ''
  const file = `${name}-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`
  mkdirSync(dir, { recursive: true })
  await promisify(execFile)('tar', ['-czf', join(dir, file), '-C', packageDir, 'build/Release/better_sqlite3.node'])
  return { [`npm_config_${name.replace(/[^a-zA-Z0-9]/g, '_')}_local_prebuilds`]: dir }
}

/** Whether the better-sqlite3 installed in `installedDir` was compiled there (node-gyp leaves its Makefile). */
export function compiledFromSource (installedDir: string): boolean {
  return existsSync(join(installedDir, 'build', 'Makefile'))
}
