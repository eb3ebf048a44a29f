/**
 * The servers of a run: the upstream stub and the proxies in front of it, with a way to read
 * each one's CPU time and memory.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { nginxConf } from '../proxies/nginx-conf.js'
import type { Options, Target } from './options.js'
import {
  firstJsonLine, freePort, nodeServer, pinned, start, waitForPort, type Server
} from './processes.js'
import { askUsage, procUsage, processTree, type Usage } from './usage.js'

export interface Running {
  target: Target | 'stub'
  url: string
  server: Server | null
}

export async function startStub (o: Options, dir: string): Promise<Running & { sizes: Record<string, number> }> {
  const tls = o.upstreamTls === null ? [] : ['--tls-key', o.upstreamTls.key, '--tls-cert', o.upstreamTls.cert]
  const server = start('stub', pinned(nodeServer('bench/stub/upstream-stub.ts', ['--port', '0', ...tls]), o.cpus.servers), { probe: true, logDir: dir })
  const ready = await firstJsonLine(server, 'port', 30_000)
  return { target: 'stub', url: `${o.upstreamTls === null ? 'http' : 'https'}://127.0.0.1:${String(ready.port)}`, server, sizes: ready.sizes as Record<string, number> }
}

/** The command that starts iceguard: the project's server under tsx, unless overridden. */
function iceguardArgv (o: Options, upstream: string, port: number, dir: string, baseline: boolean): { argv: string[], probe: boolean } {
  if (o.iceguardCmd !== null && !baseline) {
    const cmd = o.iceguardCmd.replaceAll('{UPSTREAM}', upstream).replaceAll('{PORT}', String(port))
    return { argv: ['bash', '-c', `exec ${cmd}`], probe: false }
  }
  // The decision log in a fresh state folder of the run: the default SQLite file, never one an
  // earlier run (or another build) filled.
  const args = ['--upstream', upstream, '--port', String(port), '--host', '127.0.0.1', '--log-level', o.logLevel,
    '--state-dir', path.join(dir, baseline ? 'baseline-state' : 'iceguard-state')]
  const project = baseline ? o.baselineDir : o.iceguardDir
  const server = project === null ? 'src/main/server.ts' : path.join(project, '.bench-build', 'src', 'main', 'server.js')
  return { argv: nodeServer(server, args), probe: true }
}

export async function startTarget (t: Target, o: Options, dir: string, stubUrl: string): Promise<Running> {
  if (t === 'direct') return { target: t, url: stubUrl, server: null }
  const cpus = o.cpus.servers
  if (t === 'nginx') {
    const port = await freePort()
    const conf = path.join(dir, 'nginx.conf')
    writeFileSync(conf, nginxConf(dir, port, Number(new URL(stubUrl).port)))
    const server = start('nginx', pinned(['nginx', '-p', dir, '-c', conf, '-e', path.join(dir, 'error.log')], cpus), { logDir: dir })
    await waitForPort(server, port, 15_000)
    return { target: t, url: `http://127.0.0.1:${port}`, server }
  }
  if (t === 'fastify' || t === 'node') {
    const file = `bench/proxies/${t === 'fastify' ? 'fastify-forwarder.ts' : 'node-forwarder.ts'}`
    const server = start(t, pinned(nodeServer(file, ['--port', '0', '--upstream', stubUrl]), cpus), { probe: true, logDir: dir })
    const ready = await firstJsonLine(server, 'port', 30_000)
    return { target: t, url: `http://127.0.0.1:${String(ready.port)}`, server }
  }
  const port = await freePort()
  const { argv, probe } = iceguardArgv(o, stubUrl, port, dir, t === 'baseline')
  const server = start(t, pinned(argv, cpus), { probe, logDir: dir, env: { NODE_ENV: 'production' } })
  await waitForPort(server, port, 60_000)
  return { target: t, url: `http://127.0.0.1:${port}`, server }
}

/** CPU time and memory of a running server (null for `direct`, which has no proxy). */
export async function usageOf (r: Running, resetPeak = false): Promise<Usage | null> {
  if (r.server === null) return null
  if (r.server.probe) {
    const u = await askUsage(r.server.child, resetPeak)
    return { cpuUs: u.cpuUs, rss: u.rss, peakRss: u.peakRss }
  }
  const pid = r.server.child.pid
  return pid === undefined ? null : procUsage(processTree(pid))
}
