/**
 * Drives headless Chromium over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the
 * browser reads commands on fd 3 and writes answers and events on fd 4, each message JSON ended by
 * a NUL byte). Enough to open a page, wait for it to load, run an expression in it and read the
 * result: what a person would see and do, with no driver library.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import type { Test } from 'tap'

interface Message { id?: number, method?: string, sessionId?: string, result?: Record<string, unknown>, error?: { message: string }, params?: Record<string, unknown> }

export interface BrowserPage {
  /** Navigates and resolves once the page (after any redirects) has fired `load`. */
  goto (url: string): Promise<void>
  /** Runs `expression` in the page and resolves with its value; `navigates` waits for the load it causes. */
  evaluate<T = unknown> (expression: string, options?: { navigates?: boolean }): Promise<T>
}

export async function startBrowser (t: Test, executable: string): Promise<{ newPage (): Promise<BrowserPage> }> {
  const profile = mkdtempSync(join(tmpdir(), 'iceguard-chromium-'))
  const child: ChildProcess = spawn(executable, [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', `--user-data-dir=${profile}`,
    '--remote-debugging-pipe', 'about:blank'
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => { stderr += c.toString() })
  const input = child.stdio[3] as Writable
  const output = child.stdio[4] as Readable
  const pending = new Map<number, { resolve: (m: Message) => void, reject: (e: Error) => void }>()
  const waiters: Array<{ method: string, sessionId: string | undefined, resolve: () => void }> = []
  let nextId = 1
  let buffered = Buffer.alloc(0)
  output.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk])
    let end: number
    while ((end = buffered.indexOf(0)) !== -1) {
      const message = JSON.parse(buffered.subarray(0, end).toString('utf8')) as Message
      buffered = buffered.subarray(end + 1)
      if (message.id !== undefined) {
        const p = pending.get(message.id)
        pending.delete(message.id)
        if (message.error !== undefined) p?.reject(new Error(message.error.message))
        else p?.resolve(message)
      } else if (message.method !== undefined) {
        for (let i = waiters.length - 1; i >= 0; i--) {
          const w = waiters[i] as typeof waiters[number]
          if (w.method === message.method && w.sessionId === message.sessionId) {
            waiters.splice(i, 1)
            w.resolve()
          }
        }
      }
    }
  })
  child.on('exit', (code) => {
    for (const p of pending.values()) p.reject(new Error(`chromium exited (${String(code)}): ${stderr.slice(-1500)}`))
    pending.clear()
  })

  const send = async (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> => {
    const id = nextId++
    const answer = new Promise<Message>((resolve, reject) => pending.set(id, { resolve, reject }))
    input.write(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }) + '\0')
    return (await answer).result ?? {}
  }
  t.teardown(async () => {
    if (child.exitCode === null) {
      const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
      // Browser.close lets Chromium shut its helper processes down before the profile is removed.
      await send('Browser.close').catch(() => { child.kill('SIGTERM') })
      await exited
    }
    rmSync(profile, { recursive: true, force: true, maxRetries: 10 })
  })
  const next = (method: string, sessionId: string): Promise<void> => new Promise(resolve => waiters.push({ method, sessionId, resolve }))

  return {
    async newPage () {
      const { targetId } = await send('Target.createTarget', { url: 'about:blank' }) as { targetId: string }
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true }) as { sessionId: string }
      await send('Page.enable', {}, sessionId)
      return {
        async goto (url) {
          const loaded = next('Page.loadEventFired', sessionId)
          await send('Page.navigate', { url }, sessionId)
          await loaded
        },
        async evaluate<T> (expression: string, options: { navigates?: boolean } = {}) {
          const loaded = options.navigates === true ? next('Page.loadEventFired', sessionId) : undefined
          const r = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId) as { result?: { value?: unknown }, exceptionDetails?: { text: string } }
          if (r.exceptionDetails !== undefined) throw new Error(`in the page: ${r.exceptionDetails.text}`)
          await loaded
          return r.result?.value as T
        }
      }
    }
  }
}
