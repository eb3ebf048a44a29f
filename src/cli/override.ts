/** `iceguard override`: mints a break-glass token for one table and named rules (HMAC secret from ICEGUARD_OVERRIDE_SECRET). */
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { mintOverride, OVERRIDE_HEADER, parseTtl } from '../policy/override-token.js'
import type { CliIo } from './cli-io.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { parseTableName } from './read-input.js'
import { tableName } from '../iceberg/rest-path.js'

export const OVERRIDE_USAGE = `Usage: iceguard override --table ns.name --rule RULE_ID [--rule …] --ttl 1h --reason "why" [--url <iceguard-url>]
       iceguard override --url <iceguard-url> --list | --revoke <token-id>

  Prints a token for the ${OVERRIDE_HEADER} header: the named rules' errors become warnings on that
  table until the token expires. Without --url the token is minted here with ICEGUARD_OVERRIDE_SECRET
  (the gate's own); with --url the running iceguard mints and records it (who, table, rules, expiry),
  so it can be listed and revoked. --list and --revoke work on those records.
  --token t  admin token for --url (default: ICEGUARD_ADMIN_TOKEN)

Exit: 0 done, 3 usage error, missing secret or server error.`

export async function runOverride (args: string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      table: { type: 'string' },
      rule: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      reason: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      list: { type: 'boolean' },
      revoke: { type: 'string' }
    },
    strict: true,
    allowPositionals: false
  })
  if (values.url !== undefined) return await onServer(values, io)
  if (values.list === true || values.revoke !== undefined) throw new UsageError('--list and --revoke need --url: the records live in a running iceguard')
  const secret = io.env.ICEGUARD_OVERRIDE_SECRET
  if (secret === undefined || secret === '') throw new UsageError('Cannot mint override: set ICEGUARD_OVERRIDE_SECRET to the gate\'s override secret')
  if (values.table === undefined || values.rule === undefined || values.ttl === undefined || values.reason === undefined) {
    throw new UsageError(`override needs --table, --rule, --ttl and --reason\n${OVERRIDE_USAGE}`)
  }
  const table = parseTableName(values.table)
  let token: string
  try {
    token = mintOverride({
      table: tableName(table),
      rules: values.rule,
      ttlSeconds: parseTtl(values.ttl),
      reason: values.reason,
      secret
    })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  io.stdout(token + '\n')
  return EXIT.OK
}

interface ServerArgs {
  url?: string
  token?: string
  table?: string
  rule?: string[]
  ttl?: string
  reason?: string
  list?: boolean
  revoke?: string
}

/** Mint, list or revoke through the admin API of a running iceguard. */
async function onServer (v: ServerArgs, io: CliIo): Promise<ExitCode> {
  const base = (v.url ?? '').replace(/\/+$/, '')
  if (!/^https?:\/\//.test(base)) throw new UsageError(`Invalid --url "${v.url ?? ''}": expected http(s)://host:port of a running iceguard`)
  const token = v.token ?? io.env.ICEGUARD_ADMIN_TOKEN
  const auth: Record<string, string> = token === undefined || token === '' ? {} : { authorization: `Bearer ${token}` }
  let call: { method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown }
  if (v.list === true) {
    call = { method: 'GET', path: '/admin/v1/overrides' }
  } else if (v.revoke !== undefined) {
    call = { method: 'DELETE', path: `/admin/v1/overrides/${encodeURIComponent(v.revoke)}` }
  } else {
    if (v.table === undefined || v.rule === undefined || v.ttl === undefined || v.reason === undefined) {
      throw new UsageError(`override needs --table, --rule, --ttl and --reason\n${OVERRIDE_USAGE}`)
    }
    call = { method: 'POST', path: '/admin/v1/overrides', body: { table: v.table, rules: v.rule, ttl: v.ttl, reason: v.reason } }
  }
  let status: number
  let json: Record<string, unknown>
  try {
    const res = await request(`${base}${call.path}`, {
      method: call.method,
      headers: { ...auth, ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {})
    })
    status = res.statusCode
    json = JSON.parse(await res.body.text()) as Record<string, unknown>
  } catch (err) {
    throw new UsageError(`Cannot reach iceguard at ${base}: ${(err as { code?: string }).code ?? (err as Error).message}`)
  }
  if (status >= 300) {
    const error = (json.error ?? {}) as { type?: string, message?: string }
    io.stderr(`iceguard: ${error.type ?? 'Error'}: ${error.message ?? `HTTP ${status}`}\n`)
    return EXIT.USAGE
  }
  if (call.method === 'POST') {
    io.stdout(`${String(json.token)}\n`)
  } else if (call.method === 'DELETE') {
    io.stdout(`revoked ${String(json.id)}\n`)
  } else {
    const list = json.overrides as Array<Record<string, unknown>>
    if (list.length === 0) io.stdout('no override tokens\n')
    for (const o of list) {
      const state = o['revoked-at'] !== null ? `revoked ${String(o['revoked-at'])}` : `expires ${String(o['expires-at'])}`
      io.stdout(`${String(o.id)}  ${String(o.table) || '-'}  ${(o.rules as string[]).join(',') || '-'}  ${state}  ${String(o['minted-by'] ?? '-')}  ${String(o.reason ?? '')}\n`)
    }
  }
  return EXIT.OK
}
