/**
 * Whether tap's test class is built with the plugins package.json asks for.
 *
 * tap builds its `Test` class from a plugin list (`tap.plugin` in package.json: `!@tapjs/typescript`
 * drops the ts-node loader, since the tests load through tsx). A fresh `npm ci` installs the class
 * built with tap's defaults, and tap rebuilds it on its first run, but only after it has chosen
 * the loaders for that run's test processes: the whole first run then loads every test file through
 * ts-node as well as tsx, about twice the suite's CPU (docs/performance.md). `npm test` therefore
 * runs `tap build` first when the installed class does not match, and when it was built in another
 * checkout (a copied or moved one: `buildLinksHere`).
 */
import { readFileSync, realpathSync } from 'node:fs'
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

/**
 * Whether the links `tap build` made lead into this checkout. The built class (in @tapjs/test's
 * `test-built`) finds its plugins through `test-built/node_modules`, a link to the project's
 * `.tap/plugins/node_modules`, and there `@tapjs/core` is an absolute link to the core tap was
 * installed with. A copied or moved checkout keeps that absolute link: the class then loads the
 * other checkout's core beside this one's, and every tap run fails with `weird thing got in the
 * queue` (the runner's queue does not recognise a test made by the other core). A link missing or
 * leading elsewhere counts as not here.
 */
export function buildLinksHere (root, testPackage, core) {
  return sameFile(join(testPackage, 'test-built/node_modules'), join(root, '.tap/plugins/node_modules')) &&
    sameFile(join(root, '.tap/plugins/node_modules/@tapjs/core'), core)
}

function sameFile (a, b) {
  try {
    return realpathSync(a) === realpathSync(b)
  } catch {
    return false
  }
}

/**
 * Reads package.json's `tap.plugin`, the installed class's signature and the links of its build
 * from `root`: stale when the class has other plugins or was built in another checkout.
 */
export function tapBuildIsStale (root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const configured = pkg.tap?.plugin ?? []
  try {
    const require = createRequire(join(root, 'package.json'))
    const testPackage = dirname(require.resolve('@tapjs/test/package.json', { paths: [dirname(require.resolve('tap/package.json'))] }))
    const core = dirname(require.resolve('@tapjs/core/package.json', { paths: [testPackage] }))
    return needsBuild(builtSignature(readFileSync(join(testPackage, 'test-built/dist/esm/index.js'), 'utf8')), configured) ||
      !buildLinksHere(root, testPackage, core)
  } catch {
    return true
  }
}
