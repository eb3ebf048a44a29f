/**
 * Webhooks on denied, warned and overridden decisions: CloudEvents 1.0 in structured JSON mode
 * (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md), `data` the
 * decision as the admin API shows it, a Slack-compatible `text` attribute, and the body signed
 * with HMAC-SHA256 in `X-Iceguard-Signature: sha256=<hex>` (the scheme GitHub webhooks use).
 *
 * Messages are written to the outbox in the same transaction as their decision, and delivered
 * from there by every replica (a lease keeps two from sending the same one at once): at least
 * once, retried with exponential backoff, never on the commit path.
 */
import { createHmac, randomUUID } from 'node:crypto'
import { request } from 'undici'
import { during } from '../activity.js'
import type { IceguardMetrics } from '../metrics/iceguard-metrics.js'
import { decisionToWire } from '../schemas/decisions.js'
import { tableName, type TableRef } from '../iceberg/rest-path.js'
import type { Decision } from './decision.js'
import { describe, type DecisionLogger } from './decision-log.js'
import type { DecisionStore, NewOutboxMessage } from './decision-store.js'

const SIGNATURE_HEADER = 'x-iceguard-signature'
export type WebhookEvent = 'denied' | 'warned' | 'overridden'

export interface WebhookEndpoint {
  readonly url: string
  /** Environment variable holding the signing secret; the secret itself is never stored. */
  readonly secretEnv?: string
  /** Events sent to it; default all. */
  readonly events?: readonly WebhookEvent[]
}

/** Which event a decision is, if any: a deny, a write let through with an override, or with warnings. */
function eventOf (d: Decision): WebhookEvent | undefined {
  if (d.verdict === 'deny') return 'denied'
  if (d.override !== undefined && (d.verdict === 'allow' || d.verdict === 'warn')) return 'overridden'
  if (d.verdict === 'warn') return 'warned'
  return undefined
}

/**
 * One line for chat: what happened to which table, by whom, and the rules. Names, principals and
 * messages are the caller's text, so the line is escaped as Slack asks (`&`, `<`, `>`: "Escaping
 * text", api.slack.com/reference/surfaces/formatting): a column named `<!channel>` or
 * `<https://…|sign in>` shows as typed instead of pinging a channel or hiding a link.
 */
export function slackText (d: Decision, event: WebhookEvent): string {
  const rules = [...new Set(d.findings.map(f => f.rule))]
  const what = event === 'denied' ? 'denied' : event === 'overridden' ? `let through with override ${d.override?.id ?? ''}` : 'let through with warnings'
  return slackEscape(`iceguard: ${d.kind} on ${tableName(d.table)} ${what}` +
    `${rules.length > 0 ? ` (${rules.join(', ')})` : ''}${d.principal !== undefined ? ` by ${d.principal}` : ''}` +
    `${d.findings[0] !== undefined ? `: ${d.findings[0].message}` : ''}`)
}

function slackEscape (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** The CloudEvent JSON body of a decision. */
function cloudEvent (d: Decision, event: WebhookEvent, source: string): string {
  return JSON.stringify({
    specversion: '1.0',
    id: d.id,
    source,
    type: `dev.iceguard.decision.${event}`,
    subject: tableName(d.table),
    time: new Date(d.time).toISOString(),
    datacontenttype: 'application/json',
    text: slackText(d, event),
    data: decisionToWire(d)
  })
}

function sign (body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

export interface WebhookRouting {
  /** ICEGUARD_WEBHOOK_URL and the variable of its secret. */
  readonly global?: WebhookEndpoint
  /** Endpoints the policy names for a table's scopes. */
  readonly forTable?: (table: TableRef) => readonly WebhookEndpoint[]
  /** CloudEvents `source`: the server's public URL, or `urn:iceguard`. */
  readonly source?: string
}

/** The outbox messages of a decision: one per endpoint that wants its event. */
export function webhookMessages (routing: WebhookRouting) {
  return (d: Decision): NewOutboxMessage[] => {
    const event = eventOf(d)
    if (event === undefined) return []
    const endpoints = [...(routing.global !== undefined ? [routing.global] : []), ...(routing.forTable?.(d.table) ?? [])]
    const seen = new Set<string>()
    const out: NewOutboxMessage[] = []
    for (const e of endpoints) {
      if (seen.has(e.url) || (e.events !== undefined && !e.events.includes(event))) continue
      seen.add(e.url)
      out.push({
        id: randomUUID(),
        decisionId: d.id,
        url: e.url,
        ...(e.secretEnv !== undefined ? { secretRef: e.secretEnv } : {}),
        body: cloudEvent(d, event, routing.source ?? 'urn:iceguard')
      })
    }
    return out
  }
}

interface DelivererOptions {
  readonly store: DecisionStore
  readonly log: DecisionLogger
  /** A signing secret by the name a message carries (`secretRef`). */
  readonly secretFor: (ref: string) => string | undefined
  readonly metrics?: IceguardMetrics
  /** ms between looks at the outbox (default 2000). */
  readonly pollMs?: number
  /** Attempts before a message is given up (default 12: about a day of backoff). */
  readonly maxAttempts?: number
  /** ms a delivery may take (default 10 000). */
  readonly timeoutMs?: number
}

const FIRST_BACKOFF_MS = 5_000
const LONGEST_BACKOFF_MS = 3_600_000
const LEASE_MS = 60_000

export class WebhookDeliverer {
  readonly #o: DelivererOptions
  #timer: NodeJS.Timeout | undefined
  #running: Promise<number> | undefined
  #failing = false

  constructor (opts: DelivererOptions) {
    this.#o = opts
  }

  start (): void {
    if (this.#timer !== undefined) return
    this.#timer = setInterval(() => { void this.deliverDue() }, this.#o.pollMs ?? 2000)
    this.#timer.unref()
  }

  async stop (): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  /**
   * Sends every message due at `at`; answers how many this run delivered. One run at a time: a run
   * already going (the poll's, or the one a stored decision started) is waited for first, since
   * it may have claimed its messages before the ones due now were stored.
   */
  async deliverDue (at: number = Date.now()): Promise<number> {
    while (this.#running !== undefined) await this.#running
    this.#running = during('webhook delivery', async () => await this.#run(at)).catch((err: unknown) => {
      // #run handles the store's and the receiver's failures; anything else must not end the loop either.
      this.#o.log.error({ err: describe(err) }, 'Cannot deliver webhooks: the delivery run failed; the next poll tries again')
      return 0
    }).finally(() => { this.#running = undefined })
    return await this.#running
  }

  async #run (at: number): Promise<number> {
    let claimed
    try {
      claimed = await this.#o.store.claimOutbox(at, 20, LEASE_MS)
      this.#failing = false
    } catch (err) {
      if (!this.#failing) this.#o.log.warn({ err: describe(err) }, 'Cannot read the webhook outbox: the store failed; retrying')
      this.#failing = true
      return 0
    }
    let delivered = 0
    for (const m of claimed) {
      const failure = await this.#send(m.url, m.body, m.secretRef)
      const attempts = m.attempts + 1
      try {
        if (failure === undefined) {
          await this.#o.store.markDelivered(m.id, Date.now())
          this.#o.metrics?.webhookDeliveries.inc({ outcome: 'delivered' })
          delivered++
        } else if (attempts >= (this.#o.maxAttempts ?? 12)) {
          await this.#o.store.markAttemptFailed(m.id, failure, Date.now(), undefined)
          this.#o.metrics?.webhookDeliveries.inc({ outcome: 'failed' })
          this.#o.log.error({ url: redact(m.url), decision: m.decisionId, attempts, error: failure }, 'Cannot deliver webhook: giving up')
        } else {
          const backoff = Math.min(LONGEST_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempts - 1))
          await this.#o.store.markAttemptFailed(m.id, failure, Date.now(), at + backoff)
          this.#o.metrics?.webhookDeliveries.inc({ outcome: 'retry' })
          this.#o.log.warn({ url: redact(m.url), decision: m.decisionId, attempts, error: failure, retryInMs: backoff }, 'Cannot deliver webhook: will retry')
        }
      } catch (err) {
        // The lease runs out and the message is sent again: at least once, as promised.
        this.#o.log.warn({ err: describe(err) }, 'Cannot record a webhook delivery: the store failed')
      }
    }
    return delivered
  }

  /** undefined when the receiver answered 2xx, else why not. */
  async #send (url: string, body: string, secretRef: string | undefined): Promise<string | undefined> {
    const secret = secretRef === undefined ? undefined : this.#o.secretFor(secretRef)
    try {
      const res = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/cloudevents+json; charset=utf-8',
          'user-agent': 'iceguard-webhook',
          ...(secret !== undefined && secret !== '' ? { [SIGNATURE_HEADER]: sign(body, secret) } : {})
        },
        body,
        headersTimeout: this.#o.timeoutMs ?? 10_000,
        bodyTimeout: this.#o.timeoutMs ?? 10_000
      })
      await res.body.dump()
      return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `answered ${res.statusCode}`
    } catch (err) {
      return describe(err)
    }
  }
}

/** A webhook URL for logs: no credentials, no query (Slack and others put tokens in paths and queries). */
function redact (url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? '/…' : '/'}`
  } catch {
    return '(unreadable url)'
  }
}
