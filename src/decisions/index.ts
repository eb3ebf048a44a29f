/**
 * The decision log as the server uses it: the store (PostgreSQL when a database URL is given,
 * else a SQLite file in the state folder, else SQLite in memory), the buffered log the gate's
 * audit records feed, the revocation set the override check reads, and the webhook deliverer.
 */
import { join } from 'node:path'
import type { Config } from '../main/config.js'
import type { IceguardMetrics } from '../metrics/iceguard-metrics.js'
import { DecisionLog, describe, type DecisionLogger } from './decision-log.js'
import { DecisionStore } from './decision-store.js'
import { openPostgres } from './pg-driver.js'
import { Revocations } from './revocations.js'
import { openSqlite } from './sqlite-driver.js'
import type { SqlDriver } from './sql-driver.js'
import { WebhookDeliverer, webhookMessages, type WebhookRouting } from './webhooks.js'

export { DecisionLog } from './decision-log.js'
export { DecisionStore } from './decision-store.js'
export { Revocations, withRevocation } from './revocations.js'

/** The SQLite file inside the state folder. */
const STATE_FILE = 'decisions.sqlite'

export interface Decisions {
  readonly store: DecisionStore
  readonly log: DecisionLog
  readonly revocations: Revocations
  readonly webhooks: WebhookDeliverer
  /** Stops the loops; buffered decisions are written until `deadline` (epoch ms) at most. */
  close (deadline?: number): Promise<void>
}

interface OpenDecisionsOptions {
  readonly log: DecisionLogger
  readonly metrics?: IceguardMetrics
  /** Where webhook messages go, and how their secrets are found by name. */
  readonly webhooks?: { readonly routing: WebhookRouting, readonly secretFor: (ref: string) => string | undefined }
  readonly now?: () => number
  /** Revocation refresh interval in ms. */
  readonly revocationRefreshMs?: number
}

function openDriver (config: Pick<Config, 'databaseUrl' | 'stateDir'>, log: DecisionLogger): SqlDriver {
  if (config.databaseUrl !== undefined) {
    return openPostgres(config.databaseUrl, {
      onConnectionLost: (err) => { log.warn({ err: describe(err) }, 'A decision store connection was lost: it is discarded, and its work retried on a new one') }
    })
  }
  return openSqlite(config.stateDir === undefined ? ':memory:' : join(config.stateDir, STATE_FILE))
}

export async function openDecisions (config: Pick<Config, 'databaseUrl' | 'stateDir' | 'decisionRetentionDays'>, opts: OpenDecisionsOptions): Promise<Decisions> {
  const store = new DecisionStore(openDriver(config, opts.log))
  try {
    await store.migrate()
  } catch (err) {
    // A shared database that is down at start must not keep the gate from serving: decisions
    // wait in the buffer and the migration is tried again with the first write.
    opts.log.warn({ err: describe(err), store: store.driver.location }, 'Cannot prepare the decision store yet: it will be retried')
  }
  const webhooks = new WebhookDeliverer({
    store,
    log: opts.log,
    secretFor: opts.webhooks?.secretFor ?? (() => undefined),
    ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {})
  })
  const log = new DecisionLog({
    store,
    log: opts.log,
    retentionDays: config.decisionRetentionDays,
    ...(opts.metrics !== undefined ? { metrics: opts.metrics } : {}),
    ...(opts.webhooks !== undefined ? { notify: webhookMessages(opts.webhooks.routing), onQueued: () => { webhooks.deliverDue().catch(() => {}) } } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {})
  })
  const revocations = new Revocations(store, {
    ...(opts.revocationRefreshMs !== undefined ? { refreshMs: opts.revocationRefreshMs } : {}),
    ...(opts.now !== undefined ? { now: opts.now } : {}),
    onError: (err) => opts.log.warn({ err: describe(err) }, 'Cannot read revoked override tokens: the last known list stays in force')
  })
  log.startPruning()
  // Revocations are known before the first commit is judged (when the store can be read).
  await revocations.refresh()
  revocations.start()
  // Every replica delivers from the shared outbox, whatever it has configured itself.
  webhooks.start()
  return {
    store,
    log,
    revocations,
    webhooks,
    async close (deadline) {
      revocations.stop()
      await log.close(deadline)
      await webhooks.stop()
      await store.close()
    }
  }
}
