/**
 * Reads a request body into one Buffer, bounded by the configured limit. Used where the proxy
 * must see the bytes (commit scanning, the gate); pass-through bodies are streamed instead.
 */
import type { Readable } from 'node:stream'
import { ERRORS, GateError } from '../errors.js'

export function bodyTooLarge (limit: number): GateError {
  return new GateError(ERRORS.BODY_TOO_LARGE,
    `Request body is larger than the ${limit}-byte limit of this proxy (raise --body-limit to accept it)`,
    { headers: { connection: 'close' } })
}

/**
 * Calls `done` once: with the body, with a 413 GateError when it exceeds `limit`, or with the
 * stream's error when the client went away.
 */
export function readBody (stream: Readable, contentLength: string | undefined, limit: number,
  done: (err: Error | null, body?: Buffer) => void): void {
  if (contentLength !== undefined && Number(contentLength) > limit) {
    stream.resume()
    done(bodyTooLarge(limit))
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  let finished = false
  const finish = (err: Error | null, body?: Buffer): void => {
    if (finished) return
    finished = true
    stream.removeListener('data', onData)
    stream.removeListener('end', onEnd)
    stream.removeListener('error', onError)
    stream.removeListener('close', onClose)
    done(err, body)
  }
  const onData = (chunk: Buffer): void => {
    size += chunk.length
    if (size > limit) {
      finish(bodyTooLarge(limit))
      stream.resume()
      return
    }
    chunks.push(chunk)
  }
  const onEnd = (): void => finish(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size))
  const onError = (err: Error): void => finish(err)
  const onClose = (): void => finish(new Error('the client closed the connection before the body was complete'))
  stream.on('data', onData)
  stream.on('end', onEnd)
  stream.on('error', onError)
  stream.on('close', onClose)
}
