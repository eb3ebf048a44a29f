/**
 * A decision source that asks iceguard's own `GET /admin/v1/decisions` (through `inject`, no
 * socket), as the caller: the console shows what the query API would show them, and needs no
 * wiring of its own to the decision store.
 */
import type { FastifyInstance } from 'fastify'
import type { DecisionPage, DecisionRecord, DecisionSource } from '../../src/console/decision-source.js'

class DecisionsUnavailable extends Error {
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
      const res = await ask(app, `/admin/v1/decisions${q.size === 0 ? '' : `?${q.toString()}`}`, caller.authorization)
      if (res.statusCode !== 200) throw unavailable(res)
      const body = res.json<{ decisions: DecisionPage['decisions'], 'next-page-token'?: string | null }>()
      return { decisions: body.decisions, nextPageToken: body['next-page-token'] ?? undefined }
    },
    async get (id, caller) {
      const res = await ask(app, `/admin/v1/decisions/${encodeURIComponent(id)}`, caller.authorization)
      if (res.statusCode === 200) return res.json<DecisionRecord>()
      // A 404 of the query API names the decision; any other 404 means the route is not there.
      if (res.statusCode === 404 && /^Cannot find decision /.test(errorMessage(res) ?? '')) return undefined
      throw unavailable(res)
    }
  }
}

type Injected = Awaited<ReturnType<FastifyInstance['inject']>>

async function ask (app: FastifyInstance, url: string, authorization: string | undefined): Promise<Injected> {
  return await app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } })
}

function errorMessage (res: Injected): string | undefined {
  try { return res.json<{ error?: { message?: string } }>().error?.message } catch { return undefined }
}

function unavailable (res: Injected): DecisionsUnavailable {
  if (res.statusCode === 404) return new DecisionsUnavailable('The decision log is not available on this server.')
  return new DecisionsUnavailable(`The decision log answered ${res.statusCode}: ${errorMessage(res) ?? `status ${res.statusCode}`}`)
}
