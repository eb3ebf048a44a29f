/**
 * A decision source that asks iceguard's own `GET /admin/v1/decisions` (through `inject`, no
 * socket), as the caller: the console shows what the query API would show them, and needs no
 * wiring of its own to the decision store.
 */
import type { FastifyInstance } from 'fastify'
import type { DecisionPage, DecisionSource } from '../../src/console/decision-source.js'

export class DecisionsUnavailable extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'DecisionsUnavailable'
  }
}

export function adminApiDecisionSource (app: FastifyInstance): DecisionSource {
  return {
    async list (filters, caller) {
      const q = new URLSearchParams()
      for (const [k, v] of [['namespace', filters.namespace], ['table', filters.table], ['verdict', filters.verdict], ['rule', filters.rule],
        ['page-token', filters.pageToken], ['page-size', filters.pageSize?.toString()]] as const) {
        if (v !== undefined) q.set(k, v)
      }
      const res = await app.inject({
        method: 'GET',
        url: `/admin/v1/decisions${q.size === 0 ? '' : `?${q.toString()}`}`,
        headers: caller.authorization === undefined ? {} : { authorization: caller.authorization }
      })
      if (res.statusCode === 404) throw new DecisionsUnavailable('The decision log is not available on this server.')
      if (res.statusCode !== 200) {
        let message = `status ${res.statusCode}`
        try { message = res.json<{ error?: { message?: string } }>().error?.message ?? message } catch {}
        throw new DecisionsUnavailable(`The decision log answered ${res.statusCode}: ${message}`)
      }
      const body = res.json<{ decisions: DecisionPage['decisions'], 'next-page-token'?: string | null }>()
      return { decisions: body.decisions, nextPageToken: body['next-page-token'] ?? undefined }
    }
  }
}
