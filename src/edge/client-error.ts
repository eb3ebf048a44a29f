/**
 * Requests Node's HTTP parser refuses before any handler runs (headers over the size limit, broken
 * framing, a request that did not arrive in time) still get an Iceberg ErrorModel with `code` equal
 * to the status, then the connection is closed. Nothing is logged: the parser's error carries the
 * raw bytes of the request, `Authorization` included.
 *
 * The refused bytes may follow requests on the same connection whose answers are not written yet
 * (a commit waiting for the upstream, and `GARBAGE` pipelined behind it). Those answers go first,
 * whole, then the 400: the client reads each answer as the answer to its own request, as HTTP/1.1
 * pipelining requires (RFC 9112 §9.3.2), and a commit the upstream applied is never reported as
 * refused. Node's own handler only avoids writing into an answer already started; here the answers
 * in flight are waited for. When the last of them closes the connection (the client asked for
 * `Connection: close`, so the bytes after it are not a request: RFC 9112 §9.6), nothing more is
 * written. The fast lane orders its answers the same way (client-connection.ts).
 */
import { STATUS_CODES, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { ERRORS, GateError, renderError } from '../errors.js'

/** Sockets whose refusal is written or waiting: the parser reports again on every later read. */
const answering = new WeakSet<Duplex>()

export function answerClientError (err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return
  answering.add(socket)
  // Nothing more is read: the parser is done with this connection.
  socket.pause()
  afterAnswers(socket, (started) => refuse(err, socket, started))
}

/**
 * Runs `then` once no answer is in flight on `socket` (node:http sets `_httpMessage` to the answer
 * being written, and hands the socket to the next pipelined answer when it is done). An answer to
 * a request the refused bytes belong to (a body whose framing broke) is not waited for: that
 * request never completes; `then` learns whether its answer has started.
 */
function afterAnswers (socket: Duplex, then: (started: boolean) => void): void {
  const res = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
  if (res === undefined || res === null || socket.destroyed) return then(false)
  if (!res.req.complete) return then(res.headersSent)
  // 'close' comes once node:http has finished with this answer.
  res.once('close', () => afterAnswers(socket, then))
}

function refuse (err: Error & { code?: string }, socket: Duplex, started: boolean): void {
  if (socket.destroyed) return
  // The last answer closed the connection, or an answer has started that a 400 would corrupt.
  if (!socket.writable || started) {
    socket.destroy()
    return
  }
  const refusal = err.code === 'HPE_HEADER_OVERFLOW'
    ? new GateError(ERRORS.HEADERS_TOO_LARGE, 'Request headers are larger than this server accepts; send fewer or smaller headers')
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new GateError(ERRORS.REQUEST_TIMEOUT, 'The request did not arrive in time')
      : new GateError(ERRORS.MALFORMED_HTTP, 'Malformed HTTP request')
  socket.end(closingAnswer(refusal), () => socket.destroy())
}

/**
 * The raw bytes of `err`'s answer with `Connection: close`, for a connection no HTTP server owns
 * any more (the parser gave up on it, or the fast lane refused its bytes).
 */
export function closingAnswer (err: GateError): Buffer {
  const { statusCode, headers, body } = renderError(err)
  const lines = Object.entries({ ...headers, connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return Buffer.from(`HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? ''}\r\n${lines}\r\n${body}`)
}
