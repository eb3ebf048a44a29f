/**
 * `npm test` rebuilds tap's test class before running when it was built with other plugins than
 * package.json asks for (scripts/tap-plugins.mjs): on a fresh `npm ci`, tap's first run would load
 * every test file through ts-node as well as tsx; in a copied or moved checkout, every tap run would
 * fail (`weird thing got in the queue`), the build's links leading into the old one.
 */
import { cpSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import t from 'tap'
import { builtSignature, needsBuild, tapBuildIsStale } from '../../../scripts/tap-plugins.mjs'

const DEFAULTS = ['@tapjs/after', '@tapjs/asserts', '@tapjs/mock', '@tapjs/typescript', '@tapjs/worker']
const source = (plugins: string[]): string => `// export const signature = ''\nexport const signature = \`${plugins.join('\n')}\`;\nconst applyPlugins = () => {}\n`

t.test('the signature lists the built plugins', async t => {
  t.same([...builtSignature(source(DEFAULTS)) ?? []], DEFAULTS)
  t.equal(builtSignature('export const nothing = 1'), undefined, 'no signature: unreadable')
})

t.test('a build is needed when a removed plugin is built in, or an added one is missing', async t => {
  const defaults = builtSignature(source(DEFAULTS))
  const ours = builtSignature(source(DEFAULTS.filter(p => p !== '@tapjs/mock' && p !== '@tapjs/typescript')))
  const config = ['!@tapjs/typescript', '!@tapjs/mock']
  t.equal(needsBuild(defaults, config), true, 'fresh install: ts-node and mock still built in')
  t.equal(needsBuild(ours, config), false, 'after tap build: nothing to do')
  t.equal(needsBuild(ours, [...config, '@tapjs/nock']), true, 'an added plugin that is not built')
  t.equal(needsBuild(undefined, config), true, 'an unreadable signature: build')
  t.equal(needsBuild(defaults, []), false, 'no plugin setting: the defaults are what is wanted')
})

t.test('this checkout is built as configured (this test runs under it); elsewhere, build', async t => {
  const root = new URL('../../..', import.meta.url).pathname
  t.equal(tapBuildIsStale(root), false, 'npm test built it before running')
  const empty = mkdtempSync(join(tmpdir(), 'iceguard-tap-plugins-'))
  t.teardown(() => rmSync(empty, { recursive: true, force: true }))
  writeFileSync(join(empty, 'package.json'), JSON.stringify({ tap: { plugin: ['!@tapjs/typescript'] } }))
  t.equal(tapBuildIsStale(empty), true, 'no tap installed where it looks: build (tap build then says what is wrong)')
})

t.test('a copied or moved checkout is rebuilt: the links of its build lead into the one it came from', async t => {
  const root = new URL('../../..', import.meta.url).pathname
  const require = createRequire(join(root, 'package.json'))
  const tapPackage = dirname(require.resolve('tap/package.json'))
  const testPackage = dirname(require.resolve('@tapjs/test/package.json', { paths: [tapPackage] }))
  const core = dirname(require.resolve('@tapjs/core/package.json', { paths: [testPackage] }))
  // What tapBuildIsStale reads, copied as `cp -a` copies a checkout: links kept as they are.
  const bits = ['package.json', '.tap/plugins/node_modules/@tapjs/core', ...[
    join(tapPackage, 'package.json'), join(testPackage, 'package.json'), join(core, 'package.json'),
    join(testPackage, 'test-built/dist/esm/index.js'), join(testPackage, 'test-built/node_modules')
  ].map(p => relative(root, p))]
  const work = mkdtempSync(join(tmpdir(), 'iceguard-tap-checkout-'))
  t.teardown(() => rmSync(work, { recursive: true, force: true }))
  const copy = join(work, 'copy')
  for (const bit of bits) cpSync(join(root, bit), join(copy, bit), { verbatimSymlinks: true })

  t.equal(tapBuildIsStale(root), false, 'the checkout itself: built here')
  t.equal(tapBuildIsStale(copy), true, 'its copy: @tapjs/core is linked into the original, so build')

  // What `tap build` does to the links in the copy.
  const coreLink = join(copy, '.tap/plugins/node_modules/@tapjs/core')
  rmSync(coreLink)
  symlinkSync(join(copy, relative(root, core)), coreLink)
  t.equal(tapBuildIsStale(copy), false, 'the copy rebuilt: nothing to do')

  const moved = join(work, 'moved')
  renameSync(copy, moved)
  t.equal(tapBuildIsStale(moved), true, 'moved: the link leads where the checkout was, so build')
})
