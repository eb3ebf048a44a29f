/**
 * Where the rule pages a message links to are served: the configured public URL
 * (`ICEGUARD_PUBLIC_URL`, what clients use to reach iceguard), or else the origin the request was
 * sent to — the address the caller already reaches iceguard at. The scheme is `https` only when a
 * proxy in front says so (`X-Forwarded-Proto`); the host is the request's `Host`, kept only when
 * it is a plain host[:port], so a message never carries a link to something else.
 */
import type { IncomingHttpHeaders } from 'node:http'

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

export function ruleLinkBase (publicUrl: string | undefined, headers: IncomingHttpHeaders): string {
  if (publicUrl !== undefined && publicUrl !== '') return publicUrl.replace(/\/+$/, '')
  const host = headers.host
  if (typeof host !== 'string' || !HOST.test(host)) return ''
  const forwarded = headers['x-forwarded-proto']
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase()
  return `${proto === 'https' ? 'https' : 'http'}://${host}`
}
