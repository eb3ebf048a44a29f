/**
 * Runs one of the Python drivers in interop/python/ with the toolchain's virtualenv and reads its
 * record: a list of named steps, each with the engine's result or the error it raised (class and
 * the exact text its user sees). The drivers never assert; the suites do.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { interopDir, python } from './toolchain.js'

export interface EngineError {
  /** The Python exception's module-qualified class. */
  readonly class: string
  /** str() of the exception: what a Python user sees. */
  readonly text: string
  /** For PySpark: the Java exception behind it, and its causes. */
  readonly javaClass?: string
  readonly javaMessage?: string
}

export interface DriverStep {
  readonly name: string
  readonly ok: boolean
  readonly result?: unknown
  readonly error?: EngineError
  readonly seconds: number
}

export interface DriverRun {
  readonly steps: ReadonlyMap<string, DriverStep>
  readonly order: readonly string[]
  readonly extra: Readonly<Record<string, unknown>>
  /** The driver's stderr, for a failing test's message. */
  readonly stderr: string
}

const MARK = '@@RESULT@@'

export async function runDriver (script: string, settings: Record<string, unknown>, timeoutMs = 600_000): Promise<DriverRun> {
  const child = spawn(python, [join(interopDir, 'python', script), JSON.stringify(settings)], {
    cwd: join(interopDir, 'python'),
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => { stdout += b.toString() })
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>(resolve => child.once('close', resolve))
  clearTimeout(timer)
  const at = stdout.lastIndexOf(MARK)
  if (at < 0) throw new Error(`${script} printed no record (exit ${code}):\n${stderr.slice(-4000)}`)
  const { steps, ...extra } = JSON.parse(stdout.slice(at + MARK.length)) as { steps: DriverStep[] } & Record<string, unknown>
  return { steps: new Map(steps.map(s => [s.name, s])), order: steps.map(s => s.name), extra, stderr }
}
