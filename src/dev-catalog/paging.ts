import { badRequest } from './context.js'

/**
 * Paging of list responses (spec `pageToken` / `pageSize` → `next-page-token`). Items are sorted
 * by key; the token is the last key returned, opaque to clients. An empty token is the first page
 * (the Java client sends `pageToken=` to say it can page).
 */
export function paginate<T> (items: readonly T[], key: (item: T) => string, query: URLSearchParams): { page: T[], next?: string } {
  const sorted = [...items].sort((a, b) => compare(key(a), key(b)))
  const rawSize = query.get('pageSize')
  const rawToken = query.get('pageToken')
  let start = 0
  if (rawToken !== null && rawToken !== '') {
    let after: unknown
    try {
      after = JSON.parse(Buffer.from(rawToken, 'base64url').toString('utf8'))
    } catch {
      after = undefined
    }
    if (typeof after !== 'string') throw badRequest(`Invalid pageToken: ${rawToken}`)
    start = sorted.findIndex(item => compare(key(item), after) > 0)
    if (start < 0) start = sorted.length
  }
  if (rawSize === null || rawSize === '') return { page: sorted.slice(start) }
  const size = Number(rawSize)
  if (!Number.isInteger(size) || size < 1) throw badRequest(`Invalid pageSize: ${rawSize}: must be a positive integer`)
  const page = sorted.slice(start, start + size)
  const last = page.at(-1)
  const next = start + size < sorted.length && last !== undefined
    ? Buffer.from(JSON.stringify(key(last))).toString('base64url')
    : undefined
  return { page, next }
}

const compare = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0
