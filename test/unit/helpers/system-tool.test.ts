/**
 * Checks that need Chromium or docker-compose: skipped with the reason where the program is
 * missing, failed under CI (so CI never passes by skipping), run where it is installed.
 */
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { findOnPath, inCi, systemTool } from '../../helpers/system-tool.js'

function recorder (): { t: Test, failures: string[] } {
  const failures: string[] = []
  return { t: { fail: (message: string) => { failures.push(message); return false } } as unknown as Test, failures }
}

t.test('a missing program: skipped with its name and how to install it, outside CI', async t => {
  const tool = systemTool(['no-such-browser'], 'apt-get install no-such-browser', { PATH: '/nonexistent' })
  t.equal(tool.path, undefined)
  t.match(tool.skip, /^no-such-browser is not installed \(apt-get install no-such-browser\)/)
  t.match(tool.skip, /required when CI is set/)
})

t.test('a missing program under CI: the check runs and fails, naming the install command', async t => {
  for (const ci of ['true', '1', 'yes']) {
    const tool = systemTool(['no-such-browser'], 'apt-get install no-such-browser', { PATH: '/nonexistent', CI: ci })
    t.equal(tool.skip, false, `CI=${ci}: not skipped`)
    const r = recorder()
    t.equal(tool.need(r.t), undefined)
    t.same(r.failures, ['no-such-browser is required when CI is set: apt-get install no-such-browser'], `CI=${ci}: failed`)
  }
  for (const ci of ['', '0', 'false', 'FALSE']) t.notOk(inCi({ CI: ci }), `CI=${JSON.stringify(ci)} is not CI`)
})

t.test('an installed program: found on PATH, run, never skipped', async t => {
  const dir = t.testdir({})
  const bin = join(dir, 'fake-compose')
  writeFileSync(bin, '#!/bin/sh\nexit 0\n')
  chmodSync(bin, 0o755)
  writeFileSync(join(dir, 'not-executable'), '')
  t.equal(findOnPath(['not-executable', 'fake-compose'], { PATH: `/nonexistent:${dir}` }), bin, 'the first executable of the names')
  for (const env of [{ PATH: dir }, { PATH: dir, CI: 'true' }]) {
    const tool = systemTool(['fake-compose'], 'x', env)
    t.equal(tool.skip, false)
    const r = recorder()
    t.equal(tool.need(r.t), bin)
    t.same(r.failures, [])
  }
})
