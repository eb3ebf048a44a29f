/**
 * A stream for iceguard's logger that keeps each JSON log line, for tests that assert what was (or
 * was never) logged: `startProxy(t, { app: { logger: { ...options, stream } } })`.
 */
import { Writable } from 'node:stream'

export function captureLogLines (): { stream: Writable, lines: string[] } {
  const lines: string[] = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line)
      cb()
    }
  })
  return { stream, lines }
}
