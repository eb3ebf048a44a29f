/** `iceguard override`: mints a break-glass token for one table and named rules (HMAC secret from ICEGUARD_OVERRIDE_SECRET). */
import { parseArgs } from 'node:util'
import { mintOverride, OVERRIDE_HEADER, parseTtl } from '../policy/override-token.js'
import type { CliIo } from './cli-io.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { parseTableName } from './read-input.js'
import { tableName } from '../iceberg/rest-path.js'

export const OVERRIDE_USAGE = `Usage: iceguard override --table ns.name --rule RULE_ID [--rule …] --ttl 1h --reason "why"

  Prints a token for the ${OVERRIDE_HEADER} header: the named rules' errors become warnings on that
  table until the token expires. The secret comes from ICEGUARD_OVERRIDE_SECRET (the gate's own).

Exit: 0 token printed, 3 usage error or missing secret.`

export function runOverride (args: string[], io: CliIo): ExitCode {
  const { values } = parseArgs({
    args,
    options: {
      table: { type: 'string' },
      rule: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      reason: { type: 'string' }
    },
    strict: true,
    allowPositionals: false
  })
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
