/**
 * Keep-alive connections to the upstream (TCP, or TLS for an `https` upstream), one request at a time on each (no
 * pipelining: a reset could otherwise replay a POST), at most `connections` of them; callers
 * wait in order when all are busy. Each socket gets its listeners once; events go to whichever
 * exchange holds the socket (`user`), so a request adds and removes no listeners.
 *
 * Idle sockets are closed after the configured keep-alive timeout, or one second before the
 * upstream's own `Keep-Alive: timeout=N` hint, so a request is never written to a socket the
 * upstream is about to close (what undici does too).
 */
import net from 'node:net'
import tls from 'node:tls'
import { codedError } from './coded-error.js'

/** The exchange currently using an upstream socket. */
export interface UpstreamUser {
  /**
   * `chunk` lives in the socket's reused read buffer and is valid during this call only: what is
   * kept longer is copied, or the buffer is given away with `readBufferTaken`.
   */
  onUpstreamData (chunk: Buffer): void
  /** The upstream half-closed (FIN). */
  onUpstreamEnd (): void
  /** The socket failed or closed while in use. */
  onUpstreamError (err: Error): void
  /** No traffic for the timeout the user set on the socket. */
  onUpstreamTimeout (): void
  onUpstreamDrain (): void
}

export interface UpstreamPoolOptions {
  readonly host: string
  readonly port: number
  readonly connections: number
  readonly connectTimeout: number
  readonly keepAliveTimeout: number
  /**
   * TLS for an `https` upstream: the server name and certificate checks of `tls.connect`, whose
   * defaults are Node's (its CA store plus NODE_EXTRA_CA_CERTS), as undici's are.
   */
  readonly tls?: tls.ConnectionOptions
}

export type Acquired = (err: Error | null, conn?: UpstreamConnection) => void
export type Reserved = (err: Error | null, release?: () => void) => void

/** Margin kept before the upstream's advertised keep-alive timeout. */
const KEEP_ALIVE_MARGIN = 1000
/**
 * Upstream sockets read into a buffer of their own, reused from one read to the next (`onread`),
 * instead of the stream's 'data' events: those allocate a buffer per read (64 KB, then shrunk
 * with a copy) and pass each chunk through the Readable machinery (a push, an event, a
 * `maybeReadMore` tick). Node's read path was ~15% of iceguard's CPU for both sockets together
 * (perf, data-commit workload); reading upstream answers this way cut the CPU per request by
 * about 8% on small loads and data commits (A/B runs alternating both builds). A chunk handed to
 * the user is only valid until its callback returns; see `readBufferTaken`.
 */
const READ_BUFFER_SIZE = 64 * 1024

export class UpstreamConnection {
  readonly socket: net.Socket
  user: UpstreamUser | undefined = undefined
  connected = false
  ended = false
  error: Error | undefined = undefined
  /** Set while connecting. */
  onReady: Acquired | undefined
  /** Where the socket reads into, again and again (see `readInto`). */
  readBuffer = Buffer.allocUnsafeSlow(READ_BUFFER_SIZE)
  /**
   * Set by the user when it keeps the chunk it was given past `onUpstreamData` without copying it
   * (a write the client socket did not take at once): the next read then gets a fresh buffer.
   */
  readBufferTaken = false
  /**
   * Where the next reads go instead of `readBuffer`: the unread tail of an answer body whose
   * length is known (src/upstream/lane/pool-client.ts), so that the kernel writes the body into
   * its final buffer and nothing copies it again. The user sets and clears it while it holds the
   * socket; its length bounds each read, so no byte past the body can land there.
   */
  readTarget: Buffer | undefined = undefined

  constructor (opts: UpstreamPoolOptions, onReady: Acquired, onRead: (conn: UpstreamConnection, chunk: Buffer) => void) {
    this.onReady = onReady
    if (opts.tls !== undefined) {
      // TLS sockets take no `onread`: decrypted bytes come as 'data', each chunk a buffer of its own.
      this.socket = tls.connect({ host: opts.host, port: opts.port, servername: net.isIP(opts.host) === 0 ? opts.host : undefined, ...opts.tls })
      this.socket.setNoDelay(true)
      this.socket.on('data', (chunk: Buffer) => { onRead(this, chunk) })
      return
    }
    this.socket = net.connect({
      host: opts.host,
      port: opts.port,
      noDelay: true,
      onread: {
        buffer: () => this.readInto(),
        callback: (n: number, buf: Uint8Array): boolean => {
          onRead(this, (buf as Buffer).subarray(0, n))
          return true
        }
      }
    })
  }

  readInto (): Buffer {
    if (this.readTarget !== undefined) return this.readTarget
    if (this.readBufferTaken) {
      this.readBuffer = Buffer.allocUnsafeSlow(READ_BUFFER_SIZE)
      this.readBufferTaken = false
    }
    return this.readBuffer
  }
}

function onRead (conn: UpstreamConnection, chunk: Buffer): void {
  if (conn.user !== undefined) conn.user.onUpstreamData(chunk)
  // Bytes nobody asked for on an idle connection: it cannot be trusted for the next request.
  else conn.socket.destroy()
}

export class UpstreamPool {
  readonly #opts: UpstreamPoolOptions
  readonly #idle: UpstreamConnection[] = []
  readonly #waiting: Acquired[] = []
  readonly #all = new Set<UpstreamConnection>()
  /** Slots held by sockets this pool does not manage (`reserve`). */
  #reserved = 0
  readonly #reserving: Reserved[] = []
  #closed = false

  constructor (opts: UpstreamPoolOptions) {
    this.#opts = opts
  }

  acquire (cb: Acquired): void {
    if (this.#closed) {
      cb(codedError('the upstream connection pool is closed', 'UND_ERR_CLOSED'))
      return
    }
    const idle = this.#idle
    while (idle.length > 0) {
      const conn = idle.pop() as UpstreamConnection
      if (conn.ended || conn.socket.destroyed || !conn.socket.writable) {
        conn.socket.destroy()
        continue
      }
      cb(null, conn)
      return
    }
    if (this.#free()) this.#connect(cb)
    else this.#waiting.push(cb)
  }

  /** Returns a socket after a complete exchange; `reusable` false closes it. */
  release (conn: UpstreamConnection, reusable: boolean, keepAliveHintMs: number): void {
    conn.user = undefined
    conn.readTarget = undefined
    if (!reusable || this.#closed || conn.ended || conn.socket.destroyed) {
      conn.socket.destroy()
      return
    }
    const next = this.#waiting.shift()
    if (next !== undefined) {
      next(null, conn)
      return
    }
    if (this.#reserving.length > 0) {
      // Another client of the budget is waiting for a slot: this socket's is given up to it.
      conn.socket.destroy()
      return
    }
    const idleMs = keepAliveHintMs > 0 ? Math.min(this.#opts.keepAliveTimeout, keepAliveHintMs - KEEP_ALIVE_MARGIN) : this.#opts.keepAliveTimeout
    if (idleMs <= 0) {
      conn.socket.destroy()
      return
    }
    conn.socket.setTimeout(idleMs)
    this.#idle.push(conn)
  }

  /** Closes idle sockets now and busy ones when their exchange ends; waiting callers fail. */
  close (): void {
    this.#closed = true
    for (const conn of this.#idle.splice(0)) conn.socket.destroy()
    for (const cb of this.#waiting.splice(0)) cb(codedError('the upstream connection pool is closed', 'UND_ERR_CLOSED'))
    for (const cb of this.#reserving.splice(0)) cb(codedError('the upstream connection pool is closed', 'UND_ERR_CLOSED'))
  }

  #connect (cb: Acquired): void {
    const conn = new UpstreamConnection(this.#opts, cb, onRead)
    const socket = conn.socket
    this.#all.add(conn)
    socket.setTimeout(this.#opts.connectTimeout)
    socket.on(this.#opts.tls === undefined ? 'connect' : 'secureConnect', () => {
      conn.connected = true
      socket.setTimeout(0)
      const ready = conn.onReady
      conn.onReady = undefined
      ready?.(null, conn)
    })
    socket.on('end', () => {
      conn.ended = true
      if (conn.user !== undefined) conn.user.onUpstreamEnd()
      else socket.destroy()
    })
    socket.on('drain', () => { conn.user?.onUpstreamDrain() })
    socket.on('timeout', () => {
      if (!conn.connected) socket.destroy(codedError(`connecting to the upstream took longer than ${this.#opts.connectTimeout} ms`, 'UND_ERR_CONNECT_TIMEOUT'))
      else if (conn.user !== undefined) conn.user.onUpstreamTimeout()
      else socket.destroy()
    })
    socket.on('error', (err: Error) => { conn.error = err })
    socket.on('close', () => {
      this.#all.delete(conn)
      const i = this.#idle.indexOf(conn)
      if (i !== -1) this.#idle.splice(i, 1)
      const err = conn.error ?? codedError('the upstream closed the connection', 'UND_ERR_SOCKET')
      const ready = conn.onReady
      conn.onReady = undefined
      if (ready !== undefined) ready(err)
      const user = conn.user
      conn.user = undefined
      if (user !== undefined) user.onUpstreamError(err)
      this.#slotFreed()
    })
  }

  /**
   * Holds one of the `connections` slots for a socket this pool does not manage, until the
   * `release` it is given is called: undici's, which streams what node:http forwards
   * (src/upstream/index.ts), so that both count against one `--upstream-connections` budget. When
   * the budget is spent, an idle socket of this pool is closed to make room, or the caller waits.
   */
  reserve (cb: Reserved): void {
    if (this.#closed) {
      cb(codedError('the upstream connection pool is closed', 'UND_ERR_CLOSED'))
      return
    }
    if (this.#free()) {
      this.#grant(cb)
      return
    }
    this.#reserving.push(cb)
    this.#idle.shift()?.socket.destroy()
  }

  #free (): boolean {
    return this.#all.size + this.#reserved < this.#opts.connections
  }

  #grant (cb: Reserved): void {
    this.#reserved++
    let released = false
    cb(null, () => {
      if (released) return
      released = true
      this.#reserved--
      this.#slotFreed()
    })
  }

  /** A slot opened up: the next caller in line gets it, this pool's own first. */
  #slotFreed (): void {
    if (this.#closed || !this.#free()) return
    const next = this.#waiting.shift()
    if (next !== undefined) {
      this.acquire(next)
      return
    }
    const reserving = this.#reserving.shift()
    if (reserving !== undefined) this.#grant(reserving)
  }
}
