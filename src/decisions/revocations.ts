/**
 * Which override tokens are revoked, answered synchronously on the commit path from an
 * in-process set that is refreshed from the store every few seconds. Replicas sharing one
 * PostgreSQL all refresh from it, so a revocation made on any of them is refused everywhere
 * within one refresh interval. While the store cannot be read the last known set stays in force.
 */
import { during } from '../activity.js'
import type { OverrideGrant, OverrideVerifier } from '../gate/override.js'
import type { DecisionStore } from './decision-store.js'

interface RevocationOptions {
  /** ms between refreshes (default 2000). */
  readonly refreshMs?: number
  readonly now?: () => number
  readonly onError?: (err: unknown) => void
}

export class Revocations {
  readonly #store: DecisionStore
  readonly #refreshMs: number
  readonly #now: () => number
  readonly #onError?: (err: unknown) => void
  #revoked = new Set<string>()
  #timer: NodeJS.Timeout | undefined
  #failing = false
  #running: Promise<void> | undefined

  constructor (store: DecisionStore, opts: RevocationOptions = {}) {
    this.#store = store
    this.#refreshMs = opts.refreshMs ?? 2000
    this.#now = opts.now ?? Date.now
    this.#onError = opts.onError
  }

  isRevoked (id: string): boolean {
    return this.#revoked.has(id)
  }

  /** Takes effect in this process at once (the others learn it on their next refresh). */
  add (id: string): void {
    this.#revoked.add(id)
  }

  /** Reads the set from the store; a refresh still running (a store slow to answer) is joined, not doubled. */
  async refresh (): Promise<void> {
    this.#running ??= during('revocation refresh', async () => await this.#read()).finally(() => { this.#running = undefined })
    await this.#running
  }

  async #read (): Promise<void> {
    try {
      const ids = await this.#store.revokedIds(this.#now())
      this.#revoked = new Set(ids)
      this.#failing = false
    } catch (err) {
      if (!this.#failing) {
        try { this.#onError?.(err) } catch {}
      }
      this.#failing = true
    }
  }

  start (): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => { void this.refresh() }, this.#refreshMs)
    this.#timer.unref()
  }

  stop (): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}

/**
 * A verifier that also refuses revoked tokens, and reports each token it accepts (so a token
 * minted elsewhere becomes a record that can be listed and revoked).
 */
export function withRevocation (
  verify: OverrideVerifier,
  revoked: { isRevoked (id: string): boolean },
  accepted?: (grant: OverrideGrant) => void
): OverrideVerifier {
  return (token, table) => {
    const result = verify(token, table)
    if (!result.ok) return result
    if (revoked.isRevoked(result.grant.id)) {
      return { ok: false, error: `Override token ${result.grant.id} was revoked` }
    }
    accepted?.(result.grant)
    return result
  }
}
