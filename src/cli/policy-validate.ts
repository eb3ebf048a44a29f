/** `iceguard policy validate policy.yaml`: every problem in a policy file, with line and column. */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parsePolicy } from '../policy/load-policy.js'
import { formatIssue } from '../policy/yaml-source.js'
import type { CliIo } from './cli-io.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'

export const POLICY_USAGE = `Usage: iceguard policy validate <policy.yaml>

Exit: 0 valid, 1 invalid (each problem printed with its line and column), 3 usage error or unreadable file.`

export function runPolicy (args: string[], io: CliIo): ExitCode {
  const [sub, file, ...rest] = args
  if (sub !== 'validate' || file === undefined || rest.length > 0) throw new UsageError(`policy needs: validate <policy.yaml>\n${POLICY_USAGE}`)
  let text: string
  try {
    text = readFileSync(resolve(io.cwd, file), 'utf8')
  } catch (err) {
    throw new UsageError(`Cannot read policy file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  // Contract files are relative to the policy file, wherever the command runs.
  const { policy, errors } = parsePolicy(text, file, { baseDir: dirname(resolve(io.cwd, file)) })
  if (policy === undefined || errors.length > 0) {
    io.stderr(`${file}: invalid policy (${errors.length} problem${errors.length === 1 ? '' : 's'})\n`)
    for (const e of errors) io.stderr(`  ${formatIssue(e)}\n`)
    return EXIT.DENY
  }
  io.stdout(`${file}: valid (${policy.scopes.length} scope${policy.scopes.length === 1 ? '' : 's'}, extends ${policy.extends})\n`)
  return EXIT.OK
}
