#!/usr/bin/env node
/**
 * The `iceguard` command: the gate's engine offline for CI (check, diff, policy validate),
 * break-glass tokens (override), and the server itself (serve). Exit codes: exit-codes.ts.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runCheck, CHECK_USAGE } from './check.js'
import { runCompatibility, COMPATIBILITY_USAGE } from './compatibility.js'
import { processIo, type CliIo } from './cli-io.js'
import { runDecisions, DECISIONS_USAGE } from './decisions.js'
import { runDiff, DIFF_USAGE } from './diff.js'
import { runEvolve, EVOLVE_USAGE } from './evolve.js'
import { runPlan, PLAN_USAGE } from './plan.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { runOverride, OVERRIDE_USAGE } from './override.js'
import { runPolicy, POLICY_USAGE } from './policy-validate.js'

export const USAGE = `Usage: iceguard <command> [options]

Commands:
  check            judge a commit against a policy and the table (a metadata file, or live with --url)
  diff             the changes between two schemas by field id (or the live table's and a file's)
  compatibility    is this schema (field ids optional) compatible with the live table? (needs iceguard)
  policy validate  check a policy file
  override         mint a break-glass token (ICEGUARD_OVERRIDE_SECRET, or --url to mint, list and revoke on a server)
  decisions        the gate's stored decisions from a running iceguard (--url), newest first
  evolve           change a table's schema by name through a running iceguard
  plan             the changes that make a table meet a contract (--apply commits them)
  serve            run the server (what npm start runs; iceguard serve --help)

Exit codes: 0 allow/warn or success, 1 deny or invalid policy, 2 conflict, 3 usage or input error.
Run iceguard <command> --help for a command's options.`

const HELP: Readonly<Record<string, string>> = {
  check: CHECK_USAGE,
  diff: DIFF_USAGE,
  compatibility: COMPATIBILITY_USAGE,
  policy: POLICY_USAGE,
  override: OVERRIDE_USAGE,
  decisions: DECISIONS_USAGE,
  evolve: EVOLVE_USAGE,
  plan: PLAN_USAGE
}

/** Runs one command; returns its exit code. `serve` resolves only when the server has started. */
export async function run (argv: readonly string[], io: CliIo = processIo()): Promise<ExitCode> {
  const [command, ...args] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.stdout(USAGE + '\n')
    return command === undefined ? EXIT.USAGE : EXIT.OK
  }
  const help = HELP[command]
  if (help !== undefined && (args.includes('--help') || args.includes('-h'))) {
    io.stdout(help + '\n')
    return EXIT.OK
  }
  try {
    switch (command) {
      case 'check': return await runCheck(args, io)
      case 'diff': return await runDiff(args, io)
      case 'compatibility': return await runCompatibility(args, io)
      case 'policy': return runPolicy(args, io)
      case 'override': return await runOverride(args, io)
      case 'decisions': return await runDecisions(args, io)
      case 'evolve': return await runEvolve(args, io)
      case 'plan': return await runPlan(args, io)
      case 'serve': {
        const { main } = await import('../main/server.js')
        await main(args, io.env)
        return EXIT.OK
      }
      default:
        throw new UsageError(`Unknown command "${command}"\n${USAGE}`)
    }
  } catch (err) {
    // parseArgs reports unknown or malformed flags with ERR_PARSE_ARGS_* codes.
    const code = (err as { code?: unknown }).code
    if (err instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      io.stderr(`iceguard: ${(err as Error).message}\n`)
      return EXIT.USAGE
    }
    throw err
  }
}

function invokedDirectly (): boolean {
  const script = process.argv[1]
  if (script === undefined) return false
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (invokedDirectly()) {
  run(process.argv.slice(2)).then((code) => {
    // serve keeps running on its own handles; other commands end here.
    if (process.argv[2] !== 'serve') process.exitCode = code
  }, (err: unknown) => {
    process.stderr.write(`iceguard: internal error: ${(err as Error).stack ?? String(err)}\n`)
    process.exitCode = EXIT.INTERNAL
  })
}
