/**
 * The console's overrides in force, read from the override records of the decision store (the same
 * records `GET /admin/v1/overrides?active=true` lists): minted or seen, neither expired nor revoked.
 */
import type { DecisionStore } from '../../src/decisions/index.js'
import type { OverrideSource } from '../../src/console/override-source.js'
import { overrideBinds } from '../../src/policy/override-token.js'

export function storedOverrideSource (store: Pick<DecisionStore, 'listOverrides'>): OverrideSource {
  return {
    async inForce (table, now) {
      const records = await store.listOverrides({ activeAt: now.getTime() })
      return records.filter(r => overrideBinds(r.table, table)).map(r => ({
        id: r.id,
        table: r.table,
        rules: r.rules,
        expires: new Date(r.expiresAt).toISOString(),
        principal: r.mintedBy ?? null,
        reason: r.reason ?? null
      }))
    }
  }
}
