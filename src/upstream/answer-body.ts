/**
 * An answer body as the pieces it arrived in. Big answers (a loadTable of thousands of schemas is
 * tens of MB) are read by the gate from the pieces and relayed to the client as they are, so
 * joining them into one buffer is left to the callers that want one (`body`, joined once, on
 * first use).
 */
import type { UpstreamResponse } from './undici/client.js'

/** An answer whose body is `chunks` (`length` bytes in all, possibly no chunk at all). */
export function chunkedAnswer (statusCode: number, headers: Record<string, string | string[]>,
  chunks: readonly Buffer[], length: number): UpstreamResponse {
  let joined: Buffer | undefined = chunks.length === 1 ? chunks[0] : undefined
  return {
    statusCode,
    headers,
    chunks,
    get body (): Buffer {
      joined ??= chunks.length === 0 ? Buffer.alloc(0) : Buffer.concat(chunks, length)
      return joined
    }
  }
}
