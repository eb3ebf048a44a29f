/**
 * One `--upstream-connections` budget: the fast lane's pool and the sockets undici opens for
 * node:http (`UpstreamPool.reserve`) count against the same slots.
 */
import net from 'node:net'
import t from 'tap'
import { UpstreamPool, type UpstreamConnection } from '../../src/upstream/lane/upstream-pool.js'

t.test('a reserved slot counts against the pool: an idle socket makes room, a busy budget makes callers wait', async t => {
  const open = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    open.add(socket)
    socket.on('close', () => open.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    for (const s of open) s.destroy()
    server.close(() => resolve())
  }))
  const pool = new UpstreamPool({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port, connections: 1, connectTimeout: 5000, keepAliveTimeout: 30_000 })
  t.teardown(() => pool.close())

  const conn = await new Promise<UpstreamConnection>((resolve, reject) => pool.acquire((err, c) => err === null && c !== undefined ? resolve(c) : reject(err)))
  pool.release(conn, true, -1)
  t.notOk(conn.socket.destroyed, 'the pool keeps its socket idle')

  const release = await new Promise<() => void>((resolve, reject) => pool.reserve((err, r) => err === null && r !== undefined ? resolve(r) : reject(err)))
  t.ok(conn.socket.destroyed, 'the idle socket was closed to make room for the reservation')

  const events: string[] = []
  const acquired = new Promise<UpstreamConnection>((resolve, reject) => pool.acquire((err, c) => {
    events.push('acquired')
    if (err === null && c !== undefined) resolve(c)
    else reject(err)
  }))
  await new Promise(resolve => setImmediate(resolve))
  t.same(events, [], 'with the one slot reserved, the pool\'s next request waits')
  events.push('released')
  release()
  const next = await acquired
  t.same(events, ['released', 'acquired'], 'and gets the slot once the reservation is released')
  release()
  let granted = false
  const second = new Promise<string>((resolve) => pool.reserve((err) => {
    granted = true
    resolve(err === null ? 'granted' : 'failed')
  }))
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(granted, 'a second release of the same reservation frees nothing: the busy socket holds the one slot')
  pool.release(next, true, -1)
  t.equal(await second, 'granted', 'a reservation waiting behind a busy socket gets the slot when that socket is given back')
  t.ok(next.socket.destroyed, 'the socket given back was closed for it')
})
