/**
 * The shapes the gate shares with its callers: what a transport hands in, what the upstream port
 * answers, and what the gate gives back. Types only; the decision (`judge-write.ts`) and the
 * enforcement (`commit-gate.ts`) both read them.
 */
import type { TableMetadata } from '../iceberg/types.js'
import type { TableRef } from '../iceberg/rest-path.js'
import type { GateAnswer } from './gate-answers.js'
import type { DependentView, ViewReads } from '../iceberg/view-reads.js'

/**
 * The writes the gate judges. Every route of the REST route table (src/edge/rest-routes.ts) that
 * can change what a table or view holds is one of these; everything else is passed through.
 */
export type GatedKind = 'update-table' | 'transaction' | 'create-table' | 'register-table' | 'update-view' | 'create-view' | 'register-view' |
  RemovalKind

/** Drops and renames: judged by who reads the table (VIEW_REFERENCES_COLUMN), or passed to keep the view index current. */
export type RemovalKind = 'drop-table' | 'rename-table' | 'drop-view' | 'rename-view'

/** Where the request was sent: the namespace, and the table or view for update routes. */
export interface GateIdent {
  readonly prefix?: string
  readonly namespace: readonly string[]
  readonly table?: string
}

/** An upstream answer as it came: the gate relays it without reading more than it must. */
export interface UpstreamAnswer {
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: Buffer
  /** The body as the pieces it arrived in (absent: `body`), read and relayed without joining them. */
  readonly chunks?: readonly Buffer[]
}

/** Result of loading a table's current metadata from the upstream. */
export interface BaseLoad {
  readonly status: number
  /** Parsed metadata when status is 200 and the body was readable. */
  readonly metadata?: TableMetadata
  /** Why a 200 body could not be read as table metadata. */
  readonly problem?: string
  /** The upstream's body and headers for a non-200 answer, relayed as they came. */
  readonly rawStatusBody?: Buffer
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>
}

export type AssertionsMode = 'inject' | 'require'

export interface GateConfig {
  readonly assertions: AssertionsMode
  /** Seconds in Retry-After when the base could not be loaded. */
  readonly retryAfter: number
  /** `ICEGUARD_PUBLIC_URL`: the base of the rule links in refusals; absent, the request's own origin. */
  readonly publicUrl?: string
}

/** May a table or view be registered (registerTable, registerView) in this scope? Absent: allowed. */
export type RegistrationCheck = (table: TableRef) => { readonly allowed: boolean, readonly reason?: string }

export type GateOutcome =
  /** Relay an upstream answer; `forwarded` says whether the commit itself was sent. */
  | { readonly type: 'upstream', readonly forwarded: boolean, readonly response: UpstreamAnswer, readonly headers: Readonly<Record<string, string>> }
  /** The gate answers itself; nothing was forwarded. */
  | { readonly type: 'answer', readonly answer: GateAnswer }

/**
 * The view index as the gate sees it (src/decisions/view-index.ts): who reads a table, answered
 * synchronously from memory, and the view writes the upstream accepted, to keep it current.
 */
export interface ViewIndexPort {
  dependentsOf (table: TableRef): readonly DependentView[]
  written (view: TableRef, reads: ViewReads): void
  dropped (view: TableRef): void
  renamed (from: TableRef, to: TableRef): void
}
