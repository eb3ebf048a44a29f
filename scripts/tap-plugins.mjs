/**
 * Whether tap's test class is built with the plugins package.json asks for.
 *
 * tap builds its `Test` class from a plugin list (`tap.plugin` in package.json: `!@tapjs/typescript`
 * drops the ts-node loader, since the tests load through tsx). A fresh `npm ci` installs the class
 * built with tap's defaults, and tap rebuilds it on its first run, but only after it has chosen
 * the loaders for that run's test processes: the whole first run then loads every test file through
 * ts-node as well as tsx, about twice the suite's CPU (docs/performance.md). `npm test` therefore
 * runs `tap build` first when the installed class does not match.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** The plugin names in the built class's signature (one per line), or undefined if unreadable. */
export function builtSignature (source) {
  const m = /export const signature = `([^`]*)`/.exec(source)
  return m === null ? undefined : new Set(m[1].split('\n').map(s => s.trim()).filter(s => s !== ''))
}

/**
 * Whether the built class differs from the configured list: a plugin the config removes (`!name`)
 * is built in, or one it adds is missing. An unreadable signature counts as different.
 */
export function needsBuild (signature, configured) {
  if (signature === undefined) return true
  return configured.some(entry => entry.startsWith('!') ? signature.has(entry.slice(1)) : !signature.has(entry))
}

/** Reads package.json's `tap.plugin` and the installed class's signature from `root`. */
export function tapBuildIsStale (root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const configured = pkg.tap?.plugin ?? []
  try {
    const require = createRequire(join(root, 'package.json'))
    const testPackage = dirname(require.resolve('@tapjs/test/package.json', { paths: [dirname(require.resolve('tap/package.json'))] }))
    return needsBuild(builtSignature(readFileSync(join(testPackage, 'test-built/dist/esm/index.js'), 'utf8')), configured)
  } catch {
    return true
  }
}
