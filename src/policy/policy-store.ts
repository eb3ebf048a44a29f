/**
 * Holds the policy in force. A reload that fails keeps the last good policy and says why, so a
 * typo in a live edit never opens the gate or takes the server down. Requests already being
 * evaluated keep the Policy object they resolved; a reload only swaps the reference.
 */
import { watch as fsWatch, type FSWatcher } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { loadPolicy } from './load-policy.js'
import type { Policy } from './policy.js'
import { PolicyError } from './policy-error.js'
import { isPresetName } from './presets.js'
import type { TableRef } from '../iceberg/rest-path.js'
import { resolvePolicy, type EffectivePolicy } from './resolve-policy.js'
import type { PolicyIssue } from './yaml-source.js'

export type ReloadResult =
  | { readonly ok: true, readonly changed: boolean, readonly policy: Policy }
  | { readonly ok: false, readonly error: string, readonly issues: readonly PolicyIssue[], readonly policy: Policy }

type PolicyStoreEvent =
  | { readonly type: 'reloaded', readonly source: string }
  | { readonly type: 'reload-failed', readonly source: string, readonly error: string, readonly issues: readonly PolicyIssue[] }
  /** The watcher failed (its folder removed or replaced): it is set up again after `rewatchMs`. */
  | { readonly type: 'watch-failed', readonly source: string, readonly error: string }

interface PolicyStoreOptions {
  /** Quiet period after the last file event before reloading (editors write in bursts). Default 200 ms. */
  readonly debounceMs?: number
  /** ms before a failed watcher is set up again. Default 1000 ms. */
  readonly rewatchMs?: number
  /** Folder watcher, injectable for tests; default `fs.watch`. */
  readonly watchFolder?: WatchFolder
  /** Loader, injectable for tests; default `loadPolicy`. */
  readonly load?: (spec: string) => Policy
}

/** What the store needs of `fs.watch`: changes in a folder, `error` events, and `close`. */
type WatchFolder = (dir: string, onChange: (file: string | null) => void) => Pick<FSWatcher, 'on' | 'close'>

const watchWithFs: WatchFolder = (dir, onChange) => fsWatch(dir, { persistent: false }, (_event, file) => { onChange(file) })

export class PolicyStore {
  readonly #spec: string
  readonly #load: (spec: string) => Policy
  readonly #debounceMs: number
  readonly #rewatchMs: number
  readonly #watchFolder: WatchFolder
  #policy: Policy
  #loadedAt: Date
  #lastError: string | undefined

  /** Loads the policy now; throws PolicyError when it is bad (start-up must fail). */
  constructor (spec: string | undefined, opts: PolicyStoreOptions = {}) {
    this.#spec = spec ?? 'builtin:recommended'
    this.#load = opts.load ?? loadPolicy
    this.#debounceMs = opts.debounceMs ?? 200
    this.#rewatchMs = opts.rewatchMs ?? 1000
    this.#watchFolder = opts.watchFolder ?? watchWithFs
    this.#policy = this.#load(this.#spec)
    this.#loadedAt = new Date()
  }

  get policy (): Policy { return this.#policy }
  get source (): string { return this.#spec }
  get loadedAt (): Date { return this.#loadedAt }
  /** Why the last reload failed, until a reload succeeds. */
  get lastError (): string | undefined { return this.#lastError }

  resolve (ident: TableRef, now?: Date): EffectivePolicy {
    return resolvePolicy(this.#policy, ident, now)
  }

  reload (): ReloadResult {
    try {
      const next = this.#load(this.#spec)
      const changed = next !== this.#policy
      this.#policy = next
      this.#loadedAt = new Date()
      this.#lastError = undefined
      return { ok: true, changed, policy: next }
    } catch (err) {
      const issues = err instanceof PolicyError ? err.issues : []
      this.#lastError = (err as Error).message
      return { ok: false, error: `Kept the previous policy: ${(err as Error).message}`, issues, policy: this.#policy }
    }
  }

  /**
   * Reloads when the policy file changes (debounced). Watches the directory, not the file, so
   * editors that save by rename and Kubernetes ConfigMap symlink swaps are seen too. Presets have
   * no file: the returned stop function is then a no-op. The caller wires SIGHUP to `reload()`.
   */
  watch (onEvent: (event: PolicyStoreEvent) => void): () => void {
    if (isPresetName(this.#spec)) return () => {}
    const file = resolve(this.#spec)
    const dir = dirname(file)
    const name = basename(file)
    let timer: NodeJS.Timeout | undefined
    let rewatch: NodeJS.Timeout | undefined
    let stopped = false
    const fire = (): void => {
      timer = undefined
      const r = this.reload()
      if (r.ok) onEvent({ type: 'reloaded', source: this.#spec })
      else onEvent({ type: 'reload-failed', source: this.#spec, error: r.error, issues: r.issues })
    }
    let watcher: Pick<FSWatcher, 'on' | 'close'> | undefined
    const arm = (): void => {
      rewatch = undefined
      if (stopped) return
      try {
        watcher = this.#watchFolder(dir, (changed) => {
          // Contract files live next to the policy; a change to any YAML there may matter.
          if (changed !== null && changed !== name && !/\.ya?ml$/i.test(changed) && changed !== '..data') return
          if (timer) clearTimeout(timer)
          timer = setTimeout(fire, this.#debounceMs)
          timer.unref()
        })
      } catch (err) {
        failed(err)
        return
      }
      // A watcher emits `error` when its folder goes away (a volume remounted, a folder replaced):
      // unheard, that event would end the process; heard, the watch is set up again.
      watcher.on('error', failed)
    }
    const failed = (err: unknown): void => {
      watcher?.close()
      watcher = undefined
      if (stopped || rewatch !== undefined) return
      onEvent({ type: 'watch-failed', source: this.#spec, error: err instanceof Error ? err.message : String(err) })
      rewatch = setTimeout(arm, this.#rewatchMs)
      rewatch.unref()
    }
    arm()
    return () => {
      stopped = true
      if (timer) clearTimeout(timer)
      if (rewatch) clearTimeout(rewatch)
      watcher?.close()
      watcher = undefined
    }
  }
}
