import type { TableRef } from '../iceberg/rest-path.js'
import { overrideBinds } from '../policy/override-token.js'

/**
 * Where the console reads the override tokens in force for a table, behind an interface so the
 * server can hand it the override records and tests an in-memory list.
 */

export interface OverrideInForce {
  /** The token's id (never the token itself). */
  readonly id: string
  /** Who minted it. */
  readonly principal?: string | null
  /** The table it was minted for, dotted. */
  readonly table: string
  /** The rules it turns into warnings. */
  readonly rules: readonly string[]
  /** ISO 8601 instant. */
  readonly expires: string
  readonly reason?: string | null
}

export interface OverrideSource {
  /**
   * Overrides for the table that are neither expired nor revoked at `now`: those the gate would
   * honour on it, matched by levels as the gate matches them (`overrideBinds`), never by the dotted text.
   */
  inForce (table: Pick<TableRef, 'namespace' | 'name'>, now: Date): Promise<readonly OverrideInForce[]>
}

export function memoryOverrideSource (records: ReadonlyArray<OverrideInForce & { readonly revoked?: boolean }>): OverrideSource {
  return {
    async inForce (table, now) {
      return records.filter(r => overrideBinds(r.table, table) && r.revoked !== true && Date.parse(r.expires) > now.getTime())
    }
  }
}
