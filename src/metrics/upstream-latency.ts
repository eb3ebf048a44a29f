/**
 * Upstream latency measured from undici's diagnostics channels (`undici:request:*`), so every call
 * to the catalog is timed, whichever module sends it, without wrapping the upstream client.
 * Only requests to the configured upstream origin are counted.
 */
import diagnosticsChannel from 'node:diagnostics_channel'
import type { IceguardMetrics } from './iceguard-metrics.js'
import type { BoundHistogram } from './hot-series.js'

interface UndiciRequest { readonly origin?: unknown, readonly method?: string }
interface HeadersMessage { readonly request: UndiciRequest, readonly response: { readonly statusCode: number } }
interface RequestMessage { readonly request: UndiciRequest }

function originOf (value: unknown): string | undefined {
  if (value instanceof URL) return value.origin
  try { return new URL(String(value)).origin } catch { return undefined }
}

// Distinct origin spellings seen on the channel; only a handful exist (the upstream's, any other
// client's), so the parse runs once per spelling instead of once per request.
const ORIGIN_MEMO_LIMIT = 64

/** Starts timing requests to `upstreamUrl`; returns the function that stops it. */
export function observeUpstreamLatency (upstreamUrl: string, m: IceguardMetrics): () => void {
  const upstream = originOf(upstreamUrl)
  const started = new WeakMap<object, bigint>()
  const memo = new Map<string, boolean>()
  const mine = (request: UndiciRequest): boolean => {
    if (upstream === undefined) return false
    const origin = request.origin
    // undici hands the dispatcher's origin string on every request: usually exactly the upstream's.
    if (origin === upstream) return true
    if (typeof origin !== 'string') return originOf(origin) === upstream
    let hit = memo.get(origin)
    if (hit === undefined) {
      hit = originOf(origin) === upstream
      if (memo.size >= ORIGIN_MEMO_LIMIT) memo.clear()
      memo.set(origin, hit)
    }
    return hit
  }
  // One bound series per method and status seen, so an observation builds no label key.
  const series = new Map<string, BoundHistogram>()
  const seriesOf = (method: string, status: string): BoundHistogram => {
    const key = `${status} ${method}`
    let bound = series.get(key)
    if (bound === undefined) {
      bound = m.upstreamLatency.labels({ method, status })
      series.set(key, bound)
    }
    return bound
  }

  const onCreate = (message: unknown): void => {
    const { request } = message as RequestMessage
    if (mine(request)) started.set(request, process.hrtime.bigint())
  }
  const finish = (request: UndiciRequest, status: string): void => {
    const start = started.get(request)
    if (start === undefined) return
    started.delete(request)
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    seriesOf(request.method ?? 'UNKNOWN', status).observe(seconds)
  }
  const onHeaders = (message: unknown): void => {
    const { request, response } = message as HeadersMessage
    finish(request, String(response.statusCode))
  }
  const onError = (message: unknown): void => finish((message as RequestMessage).request, 'error')

  diagnosticsChannel.subscribe('undici:request:create', onCreate)
  diagnosticsChannel.subscribe('undici:request:headers', onHeaders)
  diagnosticsChannel.subscribe('undici:request:error', onError)
  return () => {
    diagnosticsChannel.unsubscribe('undici:request:create', onCreate)
    diagnosticsChannel.unsubscribe('undici:request:headers', onHeaders)
    diagnosticsChannel.unsubscribe('undici:request:error', onError)
  }
}
