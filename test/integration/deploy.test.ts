/**
 * Deployment artefacts: the Dockerfile, the compose playground, the Kubernetes manifests and the
 * policy they mount. No Docker engine runs in CI, so the image is checked statically and the
 * compose file is validated with docker-compose 1.29 (`config -q` works offline, without an engine;
 * skipped, saying so, where docker-compose is not installed, and required under CI).
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml, parseAllDocuments } from 'yaml'
import { parsePolicy } from '../../src/policy/load-policy.js'
import { systemTool } from '../helpers/system-tool.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const read = (p: string): string => readFileSync(join(root, p), 'utf8')

// ---------- small helpers ----------

type Obj = Record<string, unknown>
function obj (v: unknown, what: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what}: expected a mapping`)
  return v as Obj
}
function arr (v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new Error(`${what}: expected a list`)
  return v
}

interface RunResult { code: number, stdout: string, stderr: string }
function run (cmd: string, args: string[], opts: { cwd?: string, env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise(resolve => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

interface Instruction { keyword: string, args: string }
interface Stage { from: string, name?: string, instructions: Instruction[] }

/** Dockerfile → stages of instructions (continuations joined, comments dropped, ARG defaults applied to FROM). */
function parseDockerfile (text: string): { args: Map<string, string>, stages: Stage[] } {
  const logical: string[] = []
  let current = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line.startsWith('#') || (line === '' && current === '')) continue
    if (line.endsWith('\\')) {
      current += line.slice(0, -1) + ' '
    } else {
      logical.push((current + line).trim())
      current = ''
    }
  }
  if (current.trim() !== '') logical.push(current.trim())
  const args = new Map<string, string>()
  const stages: Stage[] = []
  for (const l of logical) {
    const m = /^(\S+)\s*(.*)$/s.exec(l)
    if (!m) continue
    const keyword = (m[1] ?? '').toUpperCase()
    const rest = (m[2] ?? '').replace(/\s+/g, ' ').trim()
    if (keyword === 'ARG' && stages.length === 0) {
      const [k, v] = rest.split('=')
      if (k !== undefined && v !== undefined) args.set(k, v)
      continue
    }
    if (keyword === 'FROM') {
      const [image = '', , name] = rest.split(' ')
      const from = image.replace(/^\$\{?(\w+)\}?$/, (_, a: string) => args.get(a) ?? image)
      stages.push({ from, name, instructions: [] })
      continue
    }
    stages.at(-1)?.instructions.push({ keyword, args: rest })
  }
  return { args, stages }
}

/** Runs a container health check command (exec form) against a local server with the given status. */
async function probeExitCode (command: string[], portEnv: string, serve: number | 'closed'): Promise<number> {
  let server: Server | undefined
  let port: number
  if (serve === 'closed') {
    // Reserve a port, then free it: nothing listens there any more.
    const s = createServer()
    await new Promise<void>(resolve => s.listen(0, '127.0.0.1', resolve))
    port = (s.address() as AddressInfo).port
    await new Promise<void>(resolve => s.close(() => resolve()))
  } else {
    server = createServer((req, res) => {
      res.writeHead(req.url === '/healthz' || req.url === '/readyz' ? serve : 404, { 'content-type': 'application/json' })
      res.end('{}')
    })
    await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  }
  try {
    const [bin, ...rest] = command
    const args = rest.map(a => a.replace('127.0.0.1:8181', `127.0.0.1:${port}`))
    const r = await run(bin === 'node' ? process.execPath : bin!, args, { env: { ...process.env, [portEnv]: String(port) } })
    return r.code
  } finally {
    if (server) await new Promise<void>(resolve => server!.close(() => resolve()))
  }
}

// ---------- Dockerfile ----------

const dockerfileText = read('Dockerfile')
const dockerfile = parseDockerfile(dockerfileText)

const pkg = JSON.parse(read('package.json')) as { scripts?: Record<string, string>, bin?: Record<string, string>, engines?: { node?: string } }

/** Node release lines with long-term support and their end of life (nodejs.org's release schedule). */
const NODE_LTS_END_OF_LIFE: Readonly<Record<number, string>> = { 20: '2026-04-30', 22: '2027-04-30', 24: '2028-04-30' }

t.test('Dockerfile: multi-stage build on a supported Node LTS with npm ci, compile and prune', async t => {
  const { stages } = dockerfile
  t.ok(stages.length >= 2, 'at least a build and a runtime stage')
  const base = stages[0]!.from
  const major = Number(/^node:(\d+)-slim$/.exec(base)?.[1])
  for (const s of stages) t.equal(s.from, base, `stage ${s.name ?? '?'} uses the same official image, ${base}`)
  t.ok(major in NODE_LTS_END_OF_LIFE && major >= 22, `${base} is an LTS line (22 or 24), not Node 20, whose support ended on ${NODE_LTS_END_OF_LIFE[20]}`)
  t.ok(new Date(`${NODE_LTS_END_OF_LIFE[major] ?? '1970-01-01'}T00:00:00Z`) > new Date('2026-12-01T00:00:00Z'), `${base} is supported past the date of this check's writing`)
  // engines is the code's floor (undici 7 needs 20.18.1); the image's Node must meet it.
  const floor = /^>=(\d+)\.(\d+)\.(\d+)$/.exec(pkg.engines?.node ?? '')
  t.ok(floor, `engines.node is a plain lower bound (${pkg.engines?.node})`)
  t.ok(Number(floor?.[1]) <= major, `the image's Node ${major} meets engines ${pkg.engines?.node}`)
  const build = stages[0]!
  const runs = build.instructions.filter(i => i.keyword === 'RUN').map(i => i.args)
  const ci = runs.findIndex(r => /\bnpm ci\b/.test(r))
  t.match(runs[ci] ?? '', /--ignore-scripts/, 'npm ci skips lifecycle scripts: prepare would build before the sources are copied')
  const compile = runs.findIndex(r => /\bnpm run build\b/.test(r))
  const prune = runs.findIndex(r => /\bnpm prune --omit=dev\b/.test(r))
  t.ok(ci >= 0, 'dependencies installed with npm ci (lockfile exact)')
  t.ok(compile >= ci, 'compiled after installing')
  t.ok(prune >= compile, 'dev dependencies pruned after compiling')
  t.notOk(runs.some(r => /\bnpm (install|i)\b/.test(r)), 'never npm install (would ignore the lockfile)')

  t.match(pkg.scripts?.build ?? '', /\btsc\b/, 'package.json has the build script the image runs')
  t.match(pkg.scripts?.build ?? '', /chmodSync\('([^']+)', 0o755\)/, 'the build marks a file executable')
  t.equal(/chmodSync\('([^']+)', 0o755\)/.exec(pkg.scripts?.build ?? '')?.[1], pkg.bin?.iceguard, '…the bin, so a symlink to it runs')
})

t.test('Dockerfile: the CLI is on PATH, and a checkout mounted at /work is the working directory', async t => {
  const runtime = dockerfile.stages.at(-1)!
  const bin = pkg.bin?.iceguard
  t.equal(bin, 'dist/src/cli/main.js', 'package.json names the CLI')
  const copyDir = runtime.instructions.filter(i => i.keyword === 'WORKDIR').map(i => i.args)[0]
  t.equal(copyDir, '/app', 'the application is copied to /app')
  const link = runtime.instructions.find(i => i.keyword === 'RUN' && i.args.includes('ln -s'))
  t.match(link?.args ?? '', `ln -s /app/${bin} /usr/local/bin/iceguard`, 'iceguard links the bin into /usr/local/bin, which the node image has on PATH')
  const built = dockerfile.stages[0]!.instructions.filter(i => i.keyword === 'RUN').map(i => i.args).join(' ')
  t.match(built, /cp -R [^&]*\bdist\b/, 'dist/ (with the bin) is copied into the runtime stage')
  const main = read('src/cli/main.ts')
  t.ok(main.startsWith('#!/usr/bin/env node\n'), 'the bin starts with a node shebang (tsc keeps it)')
  t.match(main, /realpathSync\(script\)/, 'and runs when started through a symlink')

  const workdirs = runtime.instructions.filter(i => i.keyword === 'WORKDIR').map(i => i.args)
  t.equal(workdirs.at(-1), '/work', 'the last WORKDIR is /work: docker run -v "$PWD:/work" makes relative paths the job\'s')
  t.match(link?.args ?? '', /mkdir -p [^&]*\/work\b/, '/work exists in the image')
  t.match(dockerfileText, /docker run --rm -v "\$PWD:\/work" iceguard iceguard check/, 'the Dockerfile shows the CI use')
  const userAt = runtime.instructions.findIndex(i => i.keyword === 'USER')
  const linkAt = runtime.instructions.indexOf(link!)
  t.ok(linkAt >= 0 && linkAt < userAt, 'the link is made as root, before USER node')
})

t.test('Dockerfile: runtime stage runs unprivileged and holds only what runs', async t => {
  const runtime = dockerfile.stages.at(-1)!
  const ins = (k: string): Instruction[] => runtime.instructions.filter(i => i.keyword === k)
  const users = ins('USER')
  t.equal(users.length, 1, 'one USER instruction')
  t.equal(users[0]?.args, 'node', 'runs as the node image\'s unprivileged user')
  t.notOk(runtime.instructions.some(i => i.keyword === 'RUN' && /\bnpm (ci|install|i)\b/.test(i.args)), 'no installs in the runtime stage')
  const copies = ins('COPY')
  t.ok(copies.length > 0 && copies.every(c => c.args.includes('--from=')), 'the runtime stage copies only from the build stage')

  t.same(ins('EXPOSE').map(i => i.args), ['8181'], 'EXPOSE 8181')
  const env = ins('ENV').map(i => i.args).join(' ')
  t.match(env, /NODE_ENV=production/, 'NODE_ENV=production')
  t.match(env, /ICEGUARD_PORT=8181/, 'listens on 8181')
  t.match(env, /ICEGUARD_HOST=0\.0\.0\.0/, 'listens on every interface')
  const warehouse = /ICEGUARD_WAREHOUSE=(\S+)/.exec(env)?.[1]
  t.equal(warehouse, '/var/lib/iceguard/warehouse', 'embedded catalog data has a documented path')
  t.match(ins('VOLUME').map(i => i.args).join(' '), warehouse!, 'the warehouse path is a VOLUME')
  t.match(dockerfileText, '/etc/iceguard/policy.yaml', 'the policy mount point is documented in the Dockerfile')
  t.notOk(/ICEGUARD_(ADMIN_TOKEN|OVERRIDE_SECRET)/.test(env), 'no secret is baked into the image')

  const cmd = ins('CMD')
  t.equal(cmd.length, 1)
  t.same(JSON.parse(cmd[0]!.args), ['node', '/app/dist/src/main/server.js'], 'exec-form CMD starts the compiled server in /app')
  t.match(pkg.scripts?.start ?? '', 'node dist/src/main/server.js', 'the image starts the server as npm start does')
})

t.test('Dockerfile: HEALTHCHECK probes /healthz with node itself, and the probe works', async t => {
  const hc = dockerfile.stages.at(-1)!.instructions.filter(i => i.keyword === 'HEALTHCHECK')
  t.equal(hc.length, 1, 'one HEALTHCHECK')
  const m = /CMD (\[.*\])$/.exec(hc[0]!.args)
  t.ok(m, 'exec-form health check command')
  const command = JSON.parse(m![1]!) as string[]
  t.equal(command[0], 'node', 'uses node (the slim image has no curl or wget)')
  t.match(command.join(' '), '/healthz')
  const [ok, failing, closed] = await Promise.all([200, 503, 'closed' as const].map(s => probeExitCode(command, 'ICEGUARD_PORT', s)))
  t.equal(ok, 0, 'healthy when /healthz answers 200')
  t.equal(failing, 1, 'unhealthy when /healthz answers 503')
  t.equal(closed, 1, 'unhealthy when nothing listens')
})

t.test('.dockerignore keeps local state out and the build inputs in', async t => {
  const patterns = new Set(read('.dockerignore').split('\n').map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#')))
  for (const p of ['node_modules', 'dist', '.git', '.env', 'warehouse']) t.ok(patterns.has(p), `ignores ${p}`)
  for (const p of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'routes', 'openapi', 'examples']) {
    t.notOk(patterns.has(p) || patterns.has(p + '/') || patterns.has('/' + p), `keeps ${p}`)
  }
  const build = JSON.parse(read('tsconfig.build.json')) as { include?: string[], extends?: string }
  for (const dir of build.include ?? []) t.notOk(patterns.has(dir), `keeps ${dir}, which the build compiles`)
})

// ---------- docker-compose.yml ----------

const composeText = read('docker-compose.yml')
const compose = obj(parseYaml(composeText), 'docker-compose.yml')
const services = obj(compose.services, 'services')
const svc = (name: string): Obj => obj(services[name], `services.${name}`)

const dockerCompose = systemTool(['docker-compose'], 'apt-get install docker-compose')

t.test('docker-compose.yml validates with docker-compose 1.29 (config -q)', { skip: dockerCompose.skip }, async t => {
  const bin = dockerCompose.need(t)
  if (bin === undefined) return
  const env = { ...process.env, COMPOSE_INTERACTIVE_NO_CLI: '1' }
  const ok = await run(bin, ['-f', join(root, 'docker-compose.yml'), 'config', '-q'], { env })
  t.equal(ok.code, 0, `config -q accepts the file${ok.stderr ? ': ' + ok.stderr : ''}`)

  // The validator really checks: a Compose-Spec-only key makes it fail.
  const dir = t.testdir({})
  writeFileSync(join(dir, 'docker-compose.yml'), 'name: iceguard\n' + composeText)
  const bad = await run(bin, ['-f', join(dir, 'docker-compose.yml'), 'config', '-q'], { env })
  t.not(bad.code, 0, 'a top-level name: is rejected by this validator')
})

t.test('docker-compose.yml: the playground wiring', async t => {
  t.notOk('name' in compose, 'no top-level name: (docker-compose 1.29 rejects it)')
  for (const [name, raw] of Object.entries(services)) {
    const hc = obj(raw, name).healthcheck
    if (hc !== undefined) t.notOk('start_interval' in obj(hc, `${name}.healthcheck`), `${name}: no healthcheck.start_interval (docker-compose 1.29 rejects it)`)
  }
  t.same(Object.keys(services).sort(), ['iceguard', 'minio', 'minio-init', 'rest', 'spark'])

  // Every service_healthy dependency has a healthcheck; conditions are ones 1.29 knows.
  for (const [name, raw] of Object.entries(services)) {
    const deps = obj(raw, name).depends_on
    if (deps === undefined) continue
    for (const [dep, cond] of Object.entries(obj(deps, `${name}.depends_on`))) {
      const condition = obj(cond, `${name}.depends_on.${dep}`).condition
      t.ok(['service_started', 'service_healthy', 'service_completed_successfully'].includes(String(condition)), `${name} -> ${dep}: ${String(condition)}`)
      t.ok(dep in services, `${name} depends on an existing service ${dep}`)
      if (condition === 'service_healthy') t.ok(svc(dep).healthcheck, `${dep} has a healthcheck`)
    }
  }
  t.same(svc('iceguard').depends_on, { rest: { condition: 'service_healthy' } })
  t.same(svc('spark').depends_on, { iceguard: { condition: 'service_healthy' } })
  t.same(svc('rest').depends_on, { 'minio-init': { condition: 'service_completed_successfully' } })
  t.match(arr(svc('minio-init').command, 'minio-init.command').join(' '), /mc mb .*local\/warehouse/, 'the one-shot container creates the bucket')

  const rest = svc('rest')
  t.match(String(rest.image), /^apache\/iceberg-rest-fixture:/, 'upstream is the Iceberg REST fixture')
  const restEnv = obj(rest.environment, 'rest.environment')
  t.equal(restEnv.CATALOG_WAREHOUSE, 's3://warehouse/')
  t.equal(restEnv.CATALOG_IO__IMPL, 'org.apache.iceberg.aws.s3.S3FileIO')
  t.equal(restEnv.CATALOG_S3_ENDPOINT, 'http://minio:9000')
  t.equal(restEnv.CATALOG_S3_PATH__STYLE__ACCESS, 'true')
  t.ok(restEnv.AWS_REGION, 'region set for the S3 client')
  t.notOk('ports' in rest, 'the upstream is not published: clients cannot bypass iceguard')

  const ig = svc('iceguard')
  t.same(ig.build, { context: '.', dockerfile: 'Dockerfile' }, 'iceguard is built from this repository')
  const igEnv = obj(ig.environment, 'iceguard.environment')
  t.equal(igEnv.ICEGUARD_UPSTREAM_URL, 'http://rest:8181')
  const mounts = arr(ig.volumes, 'iceguard.volumes').map(String)
  const policyMount = mounts.find(m => m.split(':')[1] === igEnv.ICEGUARD_POLICY)
  t.ok(policyMount, 'ICEGUARD_POLICY names the mounted policy file')
  const hostPath = policyMount!.split(':')[0]!
  t.ok(existsSync(join(root, hostPath)), `${hostPath} exists`)
  t.match(policyMount!, /:ro$/, 'policy mounted read-only')
  t.same(ig.ports, ['8181:8181'])
  const hc = arr(obj(ig.healthcheck, 'iceguard.healthcheck').test, 'iceguard.healthcheck.test').map(String)
  t.equal(hc[0], 'CMD')
  const [ok, failing] = await Promise.all([200, 503].map(s => probeExitCode(hc.slice(1), 'ICEGUARD_PORT', s)))
  t.equal(ok, 0, 'compose health check passes on 200')
  t.equal(failing, 1, 'compose health check fails on 503')

  const spark = svc('spark')
  const confMount = arr(spark.volumes, 'spark.volumes').map(String).find(m => m.includes('spark-defaults.conf'))
  t.ok(confMount, 'spark-defaults.conf is mounted')
  const conf = new Map(read(confMount!.split(':')[0]!).split('\n')
    .map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#'))
    .map(l => /^(\S+)\s+(.*)$/.exec(l))
    .map(m => [m?.[1] ?? '', m?.[2] ?? ''] as const))
  t.equal(conf.get('spark.sql.catalog.lake'), 'org.apache.iceberg.spark.SparkCatalog')
  t.equal(conf.get('spark.sql.catalog.lake.type'), 'rest')
  t.equal(conf.get('spark.sql.catalog.lake.uri'), 'http://iceguard:8181', 'Spark\'s catalog is iceguard, not the upstream')
  t.equal(conf.get('spark.sql.catalog.lake.s3.endpoint'), 'http://minio:9000')
  t.equal(conf.get('spark.sql.catalog.lake.s3.path-style-access'), 'true')
  t.match(conf.get('spark.jars.packages') ?? '', /iceberg-spark-runtime-3\.5_2\.12:[\d.]+,org\.apache\.iceberg:iceberg-aws-bundle:[\d.]+/)
  t.match(String(spark.image), /^apache\/spark:3\.5\./, 'Spark 3.5 matches the 3.5 runtime')
})

// ---------- policy ----------

t.test('the example policy is valid and the ConfigMap carries the same file', async t => {
  const text = read('deploy/policy.yaml')
  const { policy, errors } = parsePolicy(text, 'deploy/policy.yaml')
  t.same(errors, [], 'no policy errors')
  t.equal(policy?.extends, 'builtin:recommended', 'the playground starts from the recommended preset')
  const cm = parseAllDocuments(read('deploy/k8s/configmap.yaml')).map(d => obj(d.toJS(), 'configmap'))
  const data = obj(cm[0]?.data, 'configmap.data')
  t.equal(data['policy.yaml'], text, 'deploy/k8s/configmap.yaml holds deploy/policy.yaml verbatim')
})

// ---------- Kubernetes ----------

const k8sDir = join(root, 'deploy/k8s')
const k8sFiles = readdirSync(k8sDir).filter(f => f.endsWith('.yaml') || f.endsWith('.yml')).sort()
const k8sDocs = k8sFiles.flatMap(f => parseAllDocuments(readFileSync(join(k8sDir, f), 'utf8')).map(d => {
  if (d.errors.length > 0) throw new Error(`${f}: ${d.errors[0]!.message}`)
  return { file: f, doc: obj(d.toJS(), f) }
}))
const byKind = (kind: string): Obj[] => k8sDocs.filter(d => d.doc.kind === kind).map(d => d.doc)

t.test('Kubernetes: files parse and the kustomization lists all of them', async t => {
  t.ok(k8sDocs.length >= 5)
  const kust = byKind('Kustomization')[0]
  t.ok(kust, 'kustomization.yaml present')
  const listed = arr(kust?.resources, 'resources').map(String).sort()
  t.same(listed, k8sFiles.filter(f => f !== 'kustomization.yaml'), 'every manifest is a resource, and every resource exists')
  for (const kind of ['Deployment', 'Service', 'ConfigMap', 'PodDisruptionBudget']) t.equal(byKind(kind).length, 1, `one ${kind}`)
})

t.test('Kubernetes: Deployment probes, ports, user and filesystem', async t => {
  const dep = byKind('Deployment')[0]!
  const spec = obj(dep.spec, 'spec')
  t.ok(Number(spec.replicas) >= 2, 'several replicas: iceguard is stateless')
  const tpl = obj(spec.template, 'template')
  const podLabels = obj(obj(tpl.metadata, 'template.metadata').labels, 'labels')
  t.same(obj(spec.selector, 'selector').matchLabels, podLabels, 'selector matches the pod labels')
  const pod = obj(tpl.spec, 'pod spec')
  const podSec = obj(pod.securityContext, 'pod securityContext')
  t.equal(podSec.runAsNonRoot, true)
  t.equal(podSec.runAsUser, 1000, 'the image\'s node user')
  const containers = arr(pod.containers, 'containers').map(c => obj(c, 'container'))
  t.equal(containers.length, 1)
  const c = containers[0]!

  const ports = arr(c.ports, 'ports').map(p => obj(p, 'port'))
  t.same(ports.map(p => [p.name, p.containerPort]), [['http', 8181]])
  const readiness = obj(obj(c.readinessProbe, 'readinessProbe').httpGet, 'readinessProbe.httpGet')
  const liveness = obj(obj(c.livenessProbe, 'livenessProbe').httpGet, 'livenessProbe.httpGet')
  t.same([readiness.path, readiness.port], ['/readyz', 'http'], 'readiness on /readyz')
  t.same([liveness.path, liveness.port], ['/healthz', 'http'], 'liveness on /healthz')

  const res = obj(c.resources, 'resources')
  t.ok(obj(res.requests, 'requests').cpu && obj(res.requests, 'requests').memory, 'cpu and memory requests')
  t.ok(obj(res.limits, 'limits').memory, 'memory limit')

  const sec = obj(c.securityContext, 'container securityContext')
  t.equal(sec.readOnlyRootFilesystem, true)
  t.equal(sec.allowPrivilegeEscalation, false)
  t.same(obj(sec.capabilities, 'capabilities').drop, ['ALL'])

  const env = new Map(arr(c.env, 'env').map(e => obj(e, 'env')).map(e => [String(e.name), e]))
  t.ok(env.get('ICEGUARD_UPSTREAM_URL')?.value, 'upstream configured')
  for (const secret of ['ICEGUARD_ADMIN_TOKEN', 'ICEGUARD_OVERRIDE_SECRET']) {
    t.ok(obj(env.get(secret)?.valueFrom, secret).secretKeyRef, `${secret} comes from a Secret, not a literal`)
  }

  const volumes = new Map(arr(pod.volumes, 'volumes').map(v => obj(v, 'volume')).map(v => [String(v.name), v]))
  const mounts = arr(c.volumeMounts, 'volumeMounts').map(m => obj(m, 'mount'))
  const tmp = mounts.find(m => m.mountPath === '/tmp')
  t.ok(tmp && volumes.get(String(tmp.name))?.emptyDir, '/tmp is a writable emptyDir')

  const policyPath = String(env.get('ICEGUARD_POLICY')?.value)
  const policyMount = mounts.find(m => m.mountPath === posix.dirname(policyPath))
  t.ok(policyMount, 'ICEGUARD_POLICY points into a mounted volume')
  t.equal(policyMount?.readOnly, true)
  const cmRef = obj(volumes.get(String(policyMount?.name))?.configMap, 'policy volume configMap')
  const cm = byKind('ConfigMap')[0]!
  t.equal(cmRef.name, obj(cm.metadata, 'cm.metadata').name, 'the policy volume is the policy ConfigMap')
  t.ok(posix.basename(policyPath) in obj(cm.data, 'cm.data'), 'the ConfigMap has the file ICEGUARD_POLICY names')
})

t.test('Kubernetes: Service and PodDisruptionBudget select the pods', async t => {
  const dep = byKind('Deployment')[0]!
  const podLabels = obj(obj(obj(obj(dep.spec, 'spec').template, 'template').metadata, 'metadata').labels, 'labels')
  const service = obj(byKind('Service')[0]!.spec, 'service.spec')
  t.same(service.selector, podLabels, 'Service selects the iceguard pods')
  const port = obj(arr(service.ports, 'service.ports')[0], 'service port')
  t.same([port.port, port.targetPort], [8181, 'http'])
  const pdb = obj(byKind('PodDisruptionBudget')[0]!.spec, 'pdb.spec')
  t.same(obj(pdb.selector, 'pdb.selector').matchLabels, podLabels)
  t.ok(Number(pdb.minAvailable) >= 1)
})

// ---------- docs ----------

t.test('deployment docs link only to files that exist', async t => {
  for (const doc of ['docs/deployment.md', 'docs/engines.md', 'docs/playground.md']) {
    const text = read(doc)
    const links = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map(m => m[1]!).filter(l => !/^[a-z]+:/.test(l))
    for (const l of links) t.ok(existsSync(join(root, dirname(doc), l)), `${doc} -> ${l}`)
    t.notMatch(text, /\/work\/|\/tmp\/ig/, `${doc} has no local machine paths`)
  }
})
