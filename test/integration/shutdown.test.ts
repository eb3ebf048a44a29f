/**
 * Graceful operation of the real process (`node --import tsx src/main/server.ts`) in front of a slow
 * upstream: on SIGTERM it stops accepting connections and stops reporting ready, lets in-flight
 * commits finish with the upstream's own answer, then exits 0; past --shutdown-timeout it exits
 * anyway. Keep-alive and pool settings are start-up options with defaults.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { DEFAULTS, loadConfig } from '../../src/main/config.js'
import { fixtureMeta, schemaCommitFor, TABLE } from '../helpers/fault-upstream.js'

const ROOT = new URL('../..', import.meta.url).pathname

interface SlowUpstream {
  readonly url: string
  /** POSTs received and not yet answered. */
  readonly held: number
  waitForHeld (n: number): Promise<void>
  release (): void
}

/** Answers reads at once; holds every POST until `release()`, then answers 200 with a marker. */
async function slowUpstream (t: Test): Promise<SlowUpstream> {
  const waiting: Array<() => void> = []
  let released = false
  let notify = (): void => {}
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const answer = (body: string): void => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
        res.end(body)
      }
      if (req.method !== 'POST') {
        answer(req.url?.startsWith('/v1/config') === true
          ? '{"defaults":{},"overrides":{}}'
          : JSON.stringify({ 'metadata-location': 's3://w/m0.json', metadata: fixtureMeta() }))
        return
      }
      const reply = (): void => answer(JSON.stringify({ 'metadata-location': 's3://w/committed-by-upstream.json', metadata: fixtureMeta() }))
      if (released) reply()
      else {
        waiting.push(reply)
        notify()
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get held () { return waiting.length },
    async waitForHeld (n) {
      const until = Date.now() + 60_000
      while (waiting.length < n && Date.now() < until) await new Promise<void>(resolve => { notify = resolve; setTimeout(resolve, 50) })
    },
    release () {
      released = true
      for (const reply of waiting.splice(0)) reply()
    }
  }
}

async function startServer (t: Test, args: string[]): Promise<{ child: ChildProcess, url: string, exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts', '--port', '0', '--host', '127.0.0.1', '--log-level', 'info', ...args], {
    cwd: ROOT,
    env: { ...process.env, ICEGUARD_UPSTREAM_URL: '', ICEGUARD_POLICY: 'builtin:spec' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.stderr!.on('data', (c: Buffer) => { out += c.toString() })
    void exited.then(code => reject(new Error(`exited ${code} before listening: ${out}`)))
  })
  return { child, url, exited }
}

interface Exchange { status: number, body: string }

/** Raw HTTP/1.1 on one socket: several requests written at once (pipelined), answers read in order. */
function pipelined (url: string, requests: string[]): { answers: Promise<Exchange[]>, connected: Promise<void> } {
  const { port } = new URL(url)
  let onConnect = (): void => {}
  const connected = new Promise<void>(resolve => { onConnect = resolve })
  const answers = new Promise<Exchange[]>((resolve) => {
    const sock = net.connect(Number(port), '127.0.0.1', () => {
      onConnect()
      sock.write(requests.join(''))
    })
    let raw = ''
    sock.on('data', (c: Buffer) => { raw += c.toString('latin1') })
    sock.on('error', () => {})
    sock.on('close', () => {
      const out: Exchange[] = []
      let rest = raw
      while (rest.startsWith('HTTP/1.1 ')) {
        const headEnd = rest.indexOf('\r\n\r\n')
        if (headEnd === -1) break
        const head = rest.slice(0, headEnd)
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
        out.push({ status: Number(head.slice(9, 12)), body: rest.slice(headEnd + 4, headEnd + 4 + length) })
        rest = rest.slice(headEnd + 4 + length)
      }
      resolve(out)
    })
  })
  return { answers, connected }
}

/** One request on a keep-alive agent; undefined when the connection is gone and none can be opened. */
function keptAlive (agent: http.Agent, url: string, method: string, path: string, body?: string): Promise<Exchange | undefined> {
  return new Promise((resolve) => {
    const req = http.request(`${url}${path}`, { method, agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => { text += c.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.on('error', () => resolve(undefined))
    })
    req.on('error', () => resolve(undefined))
    req.end(body)
  })
}

function post (path: string, body: string, close = false): string {
  return `POST ${path} HTTP/1.1\r\nhost: iceguard\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${close ? 'connection: close\r\n' : ''}\r\n${body}`
}

function connects (url: string): Promise<boolean> {
  const { port } = new URL(url)
  return new Promise((resolve) => {
    const sock = net.connect(Number(port), '127.0.0.1', () => { sock.destroy(); resolve(true) })
    sock.on('error', () => resolve(false))
  })
}

t.test('SIGTERM: not ready, no new connections, in-flight commits finish with the upstream\'s answer, exit 0', async t => {
  const up = await slowUpstream(t)
  const server = await startServer(t, ['--upstream', up.url])
  const ready = await fetch(`${server.url}/readyz`)
  t.equal(ready.status, 200, 'ready before the signal')
  await ready.body?.cancel()

  // A data commit (fast path) on a kept-alive connection, and a schema commit (gate: base load,
  // then the commit).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => agent.destroy())
  const data = keptAlive(agent, server.url, 'POST', TABLE, '{"updates":[{"action":"set-properties","updates":{"k":"v"}}]}')
  // Kept alive too, and never used again: the close must not wait for its idle timeout (72 s).
  const idleAfter = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => idleAfter.destroy())
  const schema = keptAlive(idleAfter, server.url, 'POST', TABLE, JSON.stringify(schemaCommitFor(fixtureMeta())))
  await up.waitForHeld(2)
  t.equal(up.held, 2, 'both commits reached the upstream and wait for its answer')

  server.child.kill('SIGTERM')
  const until = Date.now() + 60_000
  while (await connects(server.url) && Date.now() < until) await new Promise(resolve => setTimeout(resolve, 25))
  t.notOk(await connects(server.url), 'new connections are refused once the signal arrived')
  t.equal(server.child.exitCode, null, 'the process waits for the commits in flight')

  up.release()
  const [dataAnswer, schemaAnswer] = await Promise.all([data, schema])
  t.equal(dataAnswer?.status, 200, 'the data commit finished')
  t.match(dataAnswer?.body, /committed-by-upstream/, 'with the upstream\'s own answer')
  t.equal(schemaAnswer?.status, 200, 'the schema commit finished')
  t.match(schemaAnswer?.body, /committed-by-upstream/, 'with the upstream\'s own answer')
  // A probe on the commit's kept-alive connection, sent while the process drains: never ready.
  const probe = await keptAlive(agent, server.url, 'GET', '/readyz')
  if (probe === undefined) t.pass('the kept-alive connection was closed: not ready')
  else {
    t.equal(probe.status, 503, 'readiness answers 503 while shutting down')
    const err = JSON.parse(probe.body).error as { code: number, type: string }
    t.same([err.code, err.type], [503, 'ServiceUnavailableException'], 'as an ErrorModel')
  }
  t.equal(await server.exited, 0, 'then the process exits 0, before the shutdown timeout')
})

t.test('SIGTERM with a commit that never ends: the process still exits after --shutdown-timeout', async t => {
  const up = await slowUpstream(t)
  const server = await startServer(t, ['--upstream', up.url, '--shutdown-timeout', '800'])
  const stuck = pipelined(server.url, [post(TABLE, '{"updates":[{"action":"set-properties","updates":{}}]}', true)])
  await stuck.connected
  await up.waitForHeld(1)
  server.child.kill('SIGTERM')
  // A guard against a hang, cleared once the process exits so the run does not wait it out.
  let guard: NodeJS.Timeout | undefined
  const code = await Promise.race([server.exited, new Promise<string>(resolve => { guard = setTimeout(() => resolve('still running'), 60_000) })])
  clearTimeout(guard)
  t.not(code, 'still running', 'the process exited on its own')
  t.not(code, 0, 'with a non-zero code, so a supervisor sees the forced stop')
  up.release()
})

t.test('keep-alive and upstream pool settings: configurable, with defaults', async t => {
  const d = loadConfig([], {})
  t.equal(d.keepAliveTimeout, DEFAULTS.keepAliveTimeout)
  t.ok(d.keepAliveTimeout > 60_000, 'client keep-alive outlives a typical 60 s load-balancer idle timeout')
  t.equal(d.upstreamKeepAliveTimeout, 30_000)
  t.equal(d.upstreamConnections, 128)
  t.equal(d.shutdownTimeout, 10_000)
  const c = loadConfig(['--keep-alive-timeout', '5000', '--upstream-keep-alive-timeout', '4000', '--upstream-connections', '8', '--shutdown-timeout', '2500'], {})
  t.same([c.keepAliveTimeout, c.upstreamKeepAliveTimeout, c.upstreamConnections, c.shutdownTimeout], [5000, 4000, 8, 2500])
  const e = loadConfig([], { ICEGUARD_KEEP_ALIVE_TIMEOUT: '6000', ICEGUARD_UPSTREAM_KEEP_ALIVE_TIMEOUT: '7000', ICEGUARD_SHUTDOWN_TIMEOUT: '3000' })
  t.same([e.keepAliveTimeout, e.upstreamKeepAliveTimeout, e.shutdownTimeout], [6000, 7000, 3000])
  t.throws(() => loadConfig(['--keep-alive-timeout', '0'], {}), /keep-alive-timeout/)
  t.throws(() => loadConfig(['--shutdown-timeout', 'soon'], {}), /shutdown-timeout/)
})
