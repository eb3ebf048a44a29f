/** What a CLI command may touch: its output streams, environment and working directory. Injected so tests run commands in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  readonly env: NodeJS.ProcessEnv
  readonly cwd: string
}

export function processIo (): CliIo {
  return {
    stdout: (text) => { process.stdout.write(text) },
    stderr: (text) => { process.stderr.write(text) },
    env: process.env,
    cwd: process.cwd()
  }
}
