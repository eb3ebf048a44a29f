/**
 * Requests Node's HTTP parser refuses before any handler runs (headers over the size limit, broken
 * framing, a request that did not arrive in time) still get an Iceberg ErrorModel with `code` equal
 * to the status, then the connection is closed. Nothing is logged: the parser's error carries the
 * raw bytes of the request, `Authorization` included.
 */
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { errorBody } from '../errors.js'

export function answerClientError (err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, message] = err.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'Request headers are larger than this server accepts; send fewer or smaller headers']
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request did not arrive in time']
      : [400, 'Malformed HTTP request']
  const body = JSON.stringify(errorBody(status, 'BadRequestException', message))
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
  }
  socket.destroy()
}
