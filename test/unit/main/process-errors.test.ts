/**
 * The process-wide error handler: which errors end the process (they leave it unsound) and which
 * are logged and survived, and that the log line names the background loop the error came from.
 * The errors are raised as the real sources raise them: a socket with no `error` listener, an
 * EventEmitter's unheard `error`, a rejected promise nobody awaits.
 */
import { execFile } from 'node:child_process'
import t from 'tap'
import { unsoundBecause } from '../../../src/main/process-errors.js'

t.test('which errors leave the process unsound', async t => {
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' })
  const pgEnded = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01', severity: 'FATAL' })
  const undiciClosed = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })
  for (const [name, err] of [['a socket reset', reset], ['a PostgreSQL connection ended', pgEnded], ['an undici socket error', undiciClosed]] as const) {
    t.equal(unsoundBecause(err, undefined), undefined, `${name}: survived, even outside a background loop`)
  }
  t.equal(unsoundBecause(new Error('Connection terminated unexpectedly'), 'decision log: storing decisions'), undefined,
    'an error of no known kind inside a background loop: survived (that feature is degraded)')
  t.match(unsoundBecause(new Error('Connection terminated unexpectedly'), undefined), /outside any background loop/,
    'the same error on the request path: unsound')
  t.match(unsoundBecause(new TypeError('x.y is not a function'), 'webhook delivery'), /programming error/, 'a TypeError, even in a loop: unsound')
  t.match(unsoundBecause(Object.assign(new Error('assert'), { code: 'ERR_ASSERTION' }), undefined), /programming error/, 'a failed assertion: unsound')
  t.match(unsoundBecause('a string thrown', undefined), /outside any background loop/, 'a non-error thrown on the request path: unsound')
})

/** Runs in a process of its own (tap has its own process-wide handlers): each error, then the lines. */
const SCRIPT = `
import { EventEmitter } from 'node:events'
import net from 'node:net'
import { during } from ${JSON.stringify(new URL('../../../src/activity.ts', import.meta.url).href)}
import { handleProcessErrors } from ${JSON.stringify(new URL('../../../src/main/process-errors.ts', import.meta.url).href)}
const lines = []
let shutDowns = 0
handleProcessErrors({ error: (obj, msg) => lines.push({ obj: { ...obj, err: { code: obj.err?.code, message: obj.err?.message } }, msg }) }, () => { shutDowns++ })
const pause = (ms) => new Promise(resolve => setTimeout(resolve, ms))
await new Promise(resolve => during('revocation refresh', () => {
  // Nothing listens on port 1: the refused connection emits error with no listener.
  net.connect(1, '127.0.0.1').on('close', () => setTimeout(resolve, 10))
}))
during('webhook delivery', () => { void Promise.reject(new Error('receiver gone')) })
await pause(20)
const before = shutDowns
setTimeout(() => { new EventEmitter().emit('error', new TypeError('cannot read properties of undefined')) }, 1)
await pause(20)
setTimeout(() => { new EventEmitter().emit('error', new TypeError('a second one')) }, 1)
await pause(20)
process.stdout.write(JSON.stringify({ lines, before, shutDowns }))
`

t.test('the handler logs with the loop that was running, and shuts down only for unsound errors', async t => {
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: new URL('../../..', import.meta.url).pathname }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${err.message}\n${stderr}`))
      else resolve(stdout)
    })
  })
  const { lines, before, shutDowns } = JSON.parse(out) as { lines: Array<{ obj: any, msg: string }>, before: number, shutDowns: number }
  t.match(lines[0], { obj: { origin: 'uncaughtException', during: 'revocation refresh', err: { code: 'ECONNREFUSED' } }, msg: /goes on/ }, 'a socket error nobody listened to: logged with its loop, and survived')
  t.notOk('unsound' in (lines[0]?.obj ?? {}), 'it is not called unsound')
  t.match(lines[1], { obj: { origin: 'unhandledRejection', during: 'webhook delivery' }, msg: /goes on/ }, 'a rejection nobody awaited, in a loop: logged and survived')
  t.equal(before, 0, 'neither shut the process down')
  t.match(lines[2], { obj: { origin: 'uncaughtException', unsound: /programming error/ }, msg: /shutting down after an error/ }, 'a programming error: logged as the reason to shut down')
  t.equal(lines.length, 4, 'a second error while shutting down is logged too')
  t.equal(shutDowns, 1, 'and the shutdown starts once')
})
