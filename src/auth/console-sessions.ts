/**
 * The console's sign-in sessions: the cookie holds a random session id, and the admin credential it
 * stands for stays here, in this process. A stolen cookie is worth one session until sign-out or
 * expiry, never the admin token itself; signing out ends the session on the server, not only in
 * the browser. The credential is checked again on every page (a JWT that expires is refused then).
 */
import { randomBytes } from 'node:crypto'

/** Most sessions kept; past this the oldest ends first (a bound on memory, not a limit to tune). */
const MAX_SESSIONS = 10_000

export interface ConsoleSessions {
  /** A new session for a credential already checked; the id to put in the cookie. */
  open (credential: string, now: number): string
  /** The credential of a live session, or undefined (unknown, expired or ended). */
  credential (id: string, now: number): string | undefined
  /** Ends a session: its id opens nothing from now on. */
  end (id: string): void
}

export function createConsoleSessions (lifetimeMs: number): ConsoleSessions {
  // Map order is insertion order: the first entry is the oldest session.
  const sessions = new Map<string, { readonly credential: string, readonly expiresAt: number }>()
  return {
    open (credential, now) {
      // 256 random bits: not guessable, and nothing about the credential in it.
      const id = randomBytes(32).toString('base64url')
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string)
      sessions.set(id, { credential, expiresAt: now + lifetimeMs })
      return id
    },
    credential (id, now) {
      const s = sessions.get(id)
      if (s === undefined) return undefined
      if (s.expiresAt <= now) {
        sessions.delete(id)
        return undefined
      }
      return s.credential
    },
    end (id) {
      sessions.delete(id)
    }
  }
}
