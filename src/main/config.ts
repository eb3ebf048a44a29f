/**
 * Start-up configuration: the only module that reads flags and environment variables.
 * Every value is validated once, here; a bad start-up fails with one message per bad value
 * instead of a surprise on the first request.
 */
import { parseArgs } from 'node:util'
import { MIN_OVERRIDE_SECRET_LENGTH } from '../policy/override-token.js'

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
export type AssertionMode = 'inject' | 'require'

export interface Config {
  readonly port: number
  readonly host: string
  /** Upstream catalog URL, base path included; undefined means "run the embedded catalog". */
  readonly upstreamUrl: string | undefined
  /** Origin part of the upstream URL (`http://host:port`). */
  readonly upstreamOrigin: string | undefined
  /** Path part of the upstream URL without a trailing slash ('' or e.g. '/api/catalog'). */
  readonly upstreamBasePath: string
  /** URL clients should use to reach iceguard; replaces an upstream `overrides.uri`. */
  readonly publicUrl: string | undefined
  readonly upstreamConnectTimeout: number
  readonly upstreamHeadersTimeout: number
  readonly upstreamBodyTimeout: number
  readonly upstreamConnections: number
  /** ms an idle pooled upstream connection is kept open. */
  readonly upstreamKeepAliveTimeout: number
  /** ms an idle client connection is kept open (above a load balancer's idle timeout). */
  readonly keepAliveTimeout: number
  /** ms in-flight requests get to finish after SIGTERM/SIGINT before the process exits anyway. */
  readonly shutdownTimeout: number
  /** Seconds sent in `Retry-After` when the upstream cannot be reached. */
  readonly retryAfter: number
  /**
   * Whether the fast lane (src/edge/fast-lane/) serves the Iceberg REST calls; off, node:http and
   * Fastify serve every request. Either way the upstream exchange is the same.
   */
  readonly fastLane: boolean
  readonly bodyLimit: number
  /** Largest upstream answer iceguard reads whole (config, base loads, gated commits); streamed answers have no limit. */
  readonly upstreamMaxResponse: number
  /** Bytes of schema-history summaries the gate keeps between commits (src/iceberg/history-store.ts). */
  readonly gateHistoryMemory: number
  readonly logLevel: LogLevel
  /** Embedded catalog: warehouse folder (undefined: the catalog's default). */
  readonly warehouse: string | undefined
  /** Embedded catalog: keep everything in memory. */
  readonly memory: boolean
  readonly policyPath: string | undefined
  readonly adminToken: string | undefined
  /** Admin API: OIDC/JWT bearer tokens verified against a JWKS (undefined: not accepted). */
  readonly adminJwt: AdminJwtConfig | undefined
  /** How the gate treats schema commits that lack assert-current-schema-id. */
  readonly assertions: AssertionMode
  /** HMAC secret of break-glass override tokens (env only); undefined: overrides are refused. */
  readonly overrideSecret: string | undefined
  /** Folder of the embedded decision store (`decisions.sqlite`); undefined with no database URL: in memory. */
  readonly stateDir: string | undefined
  /** PostgreSQL URL of a decision store shared by several replicas; wins over `stateDir`. */
  readonly databaseUrl: string | undefined
  /** Days decisions are kept; 0 keeps them forever. */
  readonly decisionRetentionDays: number
  /** Global webhook for denied, warned and overridden decisions (env only). */
  readonly webhookUrl: string | undefined
  /** HMAC secret signing webhook bodies (env only). */
  readonly webhookSecret: string | undefined
  /** Seconds between crawls of the catalog's views (docs/view-index.md); 0: views are learnt from writes only. */
  readonly viewIndexInterval: number
  /** ms between reloads of the view index from the decision store (what other replicas indexed). */
  readonly viewIndexRefresh: number
  /** Bearer token the view crawl sends to the catalog; never logged. */
  readonly catalogToken: string | undefined
  /** OAuth2 client credentials the view crawl exchanges at the catalog's token endpoint; never logged. */
  readonly catalogCredential: { readonly clientId: string, readonly secret: string } | undefined
}

/** How admin bearer JWTs are verified and which claim grants read or write access. */
export interface AdminJwtConfig {
  readonly jwksUrl: string
  readonly issuer: string
  readonly audience: string
  /** Claim holding the grants: a space-separated string (OAuth `scope`) or an array; dots reach into objects. */
  readonly claim: string
  readonly readValue: string
  readonly writeValue: string
}

export class ConfigError extends Error {
  readonly problems: readonly string[]

  constructor (problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export const DEFAULTS = {
  port: 8181,
  host: '0.0.0.0',
  upstreamConnectTimeout: 5_000,
  upstreamHeadersTimeout: 60_000,
  upstreamBodyTimeout: 60_000,
  upstreamConnections: 128,
  upstreamKeepAliveTimeout: 30_000,
  keepAliveTimeout: 72_000,
  shutdownTimeout: 10_000,
  retryAfter: 1,
  bodyLimit: 10 * 1024 * 1024,
  upstreamMaxResponse: 256 * 1024 * 1024,
  gateHistoryMemory: 64 * 1024 * 1024,
  logLevel: 'info' as LogLevel,
  assertions: 'inject' as AssertionMode,
  adminJwtClaim: 'scope',
  adminJwtRead: 'iceguard:read',
  adminJwtWrite: 'iceguard:write',
  decisionRetentionDays: 90,
  viewIndexInterval: 600,
  viewIndexRefresh: 5000
} as const

interface OptionSpec {
  readonly env?: string
  readonly type: 'string' | 'boolean'
  readonly help: string
}

/** One table drives parsing, env fallback and `--help`. */
export const OPTIONS: Readonly<Record<string, OptionSpec>> = {
  port: { env: 'ICEGUARD_PORT', type: 'string', help: `listen port (default ${DEFAULTS.port})` },
  host: { env: 'ICEGUARD_HOST', type: 'string', help: `listen address (default ${DEFAULTS.host})` },
  upstream: { env: 'ICEGUARD_UPSTREAM_URL', type: 'string', help: 'upstream Iceberg REST catalog URL, base path included; none: embedded catalog' },
  'public-url': { env: 'ICEGUARD_PUBLIC_URL', type: 'string', help: 'URL clients use to reach iceguard; replaces overrides.uri in /v1/config' },
  'upstream-connect-timeout': { env: 'ICEGUARD_UPSTREAM_CONNECT_TIMEOUT', type: 'string', help: `ms to open an upstream connection (default ${DEFAULTS.upstreamConnectTimeout})` },
  'upstream-headers-timeout': { env: 'ICEGUARD_UPSTREAM_HEADERS_TIMEOUT', type: 'string', help: `ms to wait for upstream response headers (default ${DEFAULTS.upstreamHeadersTimeout})` },
  'upstream-body-timeout': { env: 'ICEGUARD_UPSTREAM_BODY_TIMEOUT', type: 'string', help: `ms of silence allowed while reading an upstream body (default ${DEFAULTS.upstreamBodyTimeout})` },
  'upstream-connections': { env: 'ICEGUARD_UPSTREAM_CONNECTIONS', type: 'string', help: `max keep-alive connections to the upstream (default ${DEFAULTS.upstreamConnections})` },
  'upstream-max-response': { env: 'ICEGUARD_UPSTREAM_MAX_RESPONSE', type: 'string', help: 'largest upstream answer read whole: config, base loads, gated commits (default 256MiB)' },
  'gate-history-memory': { env: 'ICEGUARD_GATE_HISTORY_MEMORY', type: 'string', help: 'memory for the tables\' schema-history summaries the gate keeps between commits, whole tables out least recently used first; 0 keeps none (default 64MiB)' },
  'upstream-keep-alive-timeout': { env: 'ICEGUARD_UPSTREAM_KEEP_ALIVE_TIMEOUT', type: 'string', help: `ms an idle upstream connection is kept for reuse (default ${DEFAULTS.upstreamKeepAliveTimeout})` },
  'keep-alive-timeout': { env: 'ICEGUARD_KEEP_ALIVE_TIMEOUT', type: 'string', help: `ms an idle client connection is kept open; keep it above the load balancer's idle timeout (default ${DEFAULTS.keepAliveTimeout})` },
  'shutdown-timeout': { env: 'ICEGUARD_SHUTDOWN_TIMEOUT', type: 'string', help: `ms in-flight requests get to finish after SIGTERM before the process exits anyway (default ${DEFAULTS.shutdownTimeout})` },
  'fast-lane': { env: 'ICEGUARD_FAST_LANE', type: 'string', help: 'on|off: serve Iceberg REST calls on raw sockets (on) or through node:http (default on)' },
  'retry-after': { env: 'ICEGUARD_RETRY_AFTER', type: 'string', help: `seconds in Retry-After when the upstream is unreachable (default ${DEFAULTS.retryAfter})` },
  'body-limit': { env: 'ICEGUARD_BODY_LIMIT', type: 'string', help: 'largest request body the proxy reads, e.g. 10MiB (default 10MiB)' },
  'log-level': { env: 'ICEGUARD_LOG_LEVEL', type: 'string', help: `${LOG_LEVELS.join('|')} (default ${DEFAULTS.logLevel})` },
  warehouse: { env: 'ICEGUARD_WAREHOUSE', type: 'string', help: 'embedded catalog: warehouse folder' },
  memory: { env: 'ICEGUARD_MEMORY', type: 'boolean', help: 'embedded catalog: keep everything in memory' },
  policy: { env: 'ICEGUARD_POLICY', type: 'string', help: 'policy YAML file' },
  'admin-jwks-url': { env: 'ICEGUARD_ADMIN_JWKS_URL', type: 'string', help: 'admin API: accept OIDC/JWT bearer tokens signed by a key of this JWKS (needs issuer and audience)' },
  'admin-jwt-issuer': { env: 'ICEGUARD_ADMIN_JWT_ISSUER', type: 'string', help: 'admin API: the `iss` admin JWTs must carry' },
  'admin-jwt-audience': { env: 'ICEGUARD_ADMIN_JWT_AUDIENCE', type: 'string', help: 'admin API: the `aud` admin JWTs must carry' },
  'admin-jwt-claim': { env: 'ICEGUARD_ADMIN_JWT_CLAIM', type: 'string', help: `admin API: claim that grants access, e.g. scope, roles, realm_access.roles (default ${DEFAULTS.adminJwtClaim})` },
  'admin-jwt-read': { env: 'ICEGUARD_ADMIN_JWT_READ', type: 'string', help: `admin API: claim value that grants the read endpoints (default ${DEFAULTS.adminJwtRead})` },
  'admin-jwt-write': { env: 'ICEGUARD_ADMIN_JWT_WRITE', type: 'string', help: `admin API: claim value that grants every endpoint (default ${DEFAULTS.adminJwtWrite})` },
  'state-dir': { env: 'ICEGUARD_STATE_DIR', type: 'string', help: 'folder of the decision log (SQLite); default: iceguard-state next to the warehouse' },
  'database-url': { env: 'ICEGUARD_DATABASE_URL', type: 'string', help: 'postgres://… decision log shared by several replicas (instead of --state-dir)' },
  'decision-retention': { env: 'ICEGUARD_DECISION_RETENTION', type: 'string', help: `days decisions are kept, 0 = forever (default ${DEFAULTS.decisionRetentionDays})` },
  'view-index-interval': { env: 'ICEGUARD_VIEW_INDEX_INTERVAL', type: 'string', help: `seconds between crawls of the catalog's views for the view index, 0 = learn views from writes only (default ${DEFAULTS.viewIndexInterval})` },
  'view-index-refresh': { env: 'ICEGUARD_VIEW_INDEX_REFRESH', type: 'string', help: `ms between reloads of the view index from the decision store, where replicas share it (default ${DEFAULTS.viewIndexRefresh})` },
  'catalog-token': { env: 'ICEGUARD_CATALOG_TOKEN', type: 'string', help: 'bearer token the view crawl sends to the catalog' },
  'catalog-credential': { env: 'ICEGUARD_CATALOG_CREDENTIAL', type: 'string', help: 'client_id:secret the view crawl exchanges for a token at the catalog (OAuth2 client credentials)' },
  'require-assertions': { type: 'boolean', help: 'reject schema commits without assert-current-schema-id (ICEGUARD_ASSERTIONS=inject|require)' },
  help: { type: 'boolean', help: 'print this help' }
}

export function usage (): string {
  const lines = ['Usage: iceguard [options]', '']
  for (const [name, spec] of Object.entries(OPTIONS)) {
    const flag = spec.type === 'string' ? `--${name} <value>` : `--${name}`
    const env = spec.env === undefined ? '' : ` [${spec.env}]`
    lines.push(`  ${flag.padEnd(36)} ${spec.help}${env}`)
  }
  lines.push('', 'Environment only: ICEGUARD_ADMIN_TOKEN (admin API bearer token), ICEGUARD_ASSERTIONS=inject|require,',
    '  ICEGUARD_OVERRIDE_SECRET (HMAC secret of break-glass override tokens),',
    '  ICEGUARD_WEBHOOK_URL and ICEGUARD_WEBHOOK_SECRET (webhook for denied, warned and overridden decisions)')
  return lines.join('\n')
}

/** True when the arguments ask for `--help`/`-h` (checked before validation). */
export function wantsHelp (argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h')
}

type Raw = Record<string, string | boolean | undefined>

/**
 * Parses and validates flags (`argv`, without the node and script entries) over environment
 * variables; a flag wins over its variable. Throws ConfigError listing every bad value.
 */
export function loadConfig (argv: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Config {
  const problems: string[] = []
  const raw = readRaw(argv, env, problems)
  const str = (name: string): string | undefined => {
    const v = raw[name]
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
  }
  const bool = (name: string): boolean => raw[name] === true || (typeof raw[name] === 'string' && parseBool(name, raw[name], problems))

  const port = int(problems, 'port', str('port'), DEFAULTS.port, 0, 65535)
  const host = str('host') ?? DEFAULTS.host

  const upstream = url(problems, 'upstream', str('upstream'))
  const publicUrl = url(problems, 'public-url', str('public-url'))

  const logLevel = (str('log-level') ?? DEFAULTS.logLevel).toLowerCase()
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    problems.push(`--log-level/ICEGUARD_LOG_LEVEL: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`)
  }

  let assertions: AssertionMode = DEFAULTS.assertions
  const envAssertions = env.ICEGUARD_ASSERTIONS?.trim().toLowerCase()
  if (envAssertions !== undefined && envAssertions !== '') {
    if (envAssertions === 'inject' || envAssertions === 'require') assertions = envAssertions
    else problems.push(`ICEGUARD_ASSERTIONS: "${envAssertions}" is not one of inject, require`)
  }
  if (raw['require-assertions'] === true) assertions = 'require'

  const bodyLimitText = str('body-limit')
  const bodyLimit = bodyLimitText === undefined ? DEFAULTS.bodyLimit : parseBytes(bodyLimitText)
  if (bodyLimit === undefined || bodyLimit < 1) {
    problems.push(`--body-limit/ICEGUARD_BODY_LIMIT: "${bodyLimitText}" is not a size such as 1048576, 512KiB or 10MiB`)
  }

  const maxResponseText = str('upstream-max-response')
  const upstreamMaxResponse = maxResponseText === undefined ? DEFAULTS.upstreamMaxResponse : parseBytes(maxResponseText)
  if (upstreamMaxResponse === undefined || upstreamMaxResponse < 1024) {
    problems.push(`--upstream-max-response/ICEGUARD_UPSTREAM_MAX_RESPONSE: "${maxResponseText}" is not a size of at least 1KiB such as 64MiB`)
  }

  const adminJwt = adminJwtConfig(problems, str)
  const databaseUrl = str('database-url')
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    problems.push('--database-url/ICEGUARD_DATABASE_URL: must start with postgres:// or postgresql://')
  }
  const webhookText = env.ICEGUARD_WEBHOOK_URL?.trim()
  let webhookUrl: string | undefined
  if (webhookText !== undefined && webhookText !== '') {
    if (URL.canParse(webhookText) && /^https?:$/.test(new URL(webhookText).protocol)) webhookUrl = new URL(webhookText).href
    else problems.push(`ICEGUARD_WEBHOOK_URL: "${webhookText}" is not an http:// or https:// URL`)
  }
  const historyText = str('gate-history-memory')
  const gateHistoryMemory = historyText === undefined ? DEFAULTS.gateHistoryMemory : parseBytes(historyText)
  if (gateHistoryMemory === undefined || gateHistoryMemory < 0) {
    problems.push(`--gate-history-memory/ICEGUARD_GATE_HISTORY_MEMORY: "${historyText}" is not a size such as 0, 512KiB or 64MiB`)
  }

  const config: Config = {
    port,
    host,
    upstreamUrl: upstream?.href,
    upstreamOrigin: upstream?.origin,
    upstreamBasePath: upstream === undefined ? '' : upstream.pathname.replace(/\/+$/, ''),
    publicUrl: publicUrl?.href.replace(/\/+$/, ''),
    upstreamConnectTimeout: int(problems, 'upstream-connect-timeout', str('upstream-connect-timeout'), DEFAULTS.upstreamConnectTimeout, 1, 600_000),
    upstreamHeadersTimeout: int(problems, 'upstream-headers-timeout', str('upstream-headers-timeout'), DEFAULTS.upstreamHeadersTimeout, 1, 3_600_000),
    upstreamBodyTimeout: int(problems, 'upstream-body-timeout', str('upstream-body-timeout'), DEFAULTS.upstreamBodyTimeout, 1, 3_600_000),
    upstreamConnections: int(problems, 'upstream-connections', str('upstream-connections'), DEFAULTS.upstreamConnections, 1, 100_000),
    upstreamKeepAliveTimeout: int(problems, 'upstream-keep-alive-timeout', str('upstream-keep-alive-timeout'), DEFAULTS.upstreamKeepAliveTimeout, 1, 3_600_000),
    keepAliveTimeout: int(problems, 'keep-alive-timeout', str('keep-alive-timeout'), DEFAULTS.keepAliveTimeout, 1, 3_600_000),
    shutdownTimeout: int(problems, 'shutdown-timeout', str('shutdown-timeout'), DEFAULTS.shutdownTimeout, 1, 3_600_000),
    retryAfter: int(problems, 'retry-after', str('retry-after'), DEFAULTS.retryAfter, 0, 86_400),
    fastLane: onOff(problems, 'fast-lane', str('fast-lane'), true),
    bodyLimit: bodyLimit ?? DEFAULTS.bodyLimit,
    upstreamMaxResponse: upstreamMaxResponse ?? DEFAULTS.upstreamMaxResponse,
    gateHistoryMemory: gateHistoryMemory ?? DEFAULTS.gateHistoryMemory,
    logLevel: logLevel as LogLevel,
    warehouse: str('warehouse'),
    memory: bool('memory'),
    policyPath: str('policy'),
    adminToken: env.ICEGUARD_ADMIN_TOKEN === undefined || env.ICEGUARD_ADMIN_TOKEN === '' ? undefined : env.ICEGUARD_ADMIN_TOKEN,
    adminJwt,
    assertions,
    overrideSecret: env.ICEGUARD_OVERRIDE_SECRET === undefined || env.ICEGUARD_OVERRIDE_SECRET === '' ? undefined : env.ICEGUARD_OVERRIDE_SECRET,
    stateDir: str('state-dir'),
    databaseUrl,
    decisionRetentionDays: int(problems, 'decision-retention', str('decision-retention'), DEFAULTS.decisionRetentionDays, 0, 36_500),
    webhookUrl,
    webhookSecret: env.ICEGUARD_WEBHOOK_SECRET === undefined || env.ICEGUARD_WEBHOOK_SECRET === '' ? undefined : env.ICEGUARD_WEBHOOK_SECRET,
    viewIndexInterval: int(problems, 'view-index-interval', str('view-index-interval'), DEFAULTS.viewIndexInterval, 0, 604_800),
    viewIndexRefresh: int(problems, 'view-index-refresh', str('view-index-refresh'), DEFAULTS.viewIndexRefresh, 100, 3_600_000),
    catalogToken: str('catalog-token'),
    catalogCredential: clientCredential(problems, str('catalog-credential'))
  }
  if (config.overrideSecret !== undefined && config.overrideSecret.length < MIN_OVERRIDE_SECRET_LENGTH) {
    // Refused at start, not at the first mint: a gate must never run with a secret tokens cannot use.
    problems.push(`ICEGUARD_OVERRIDE_SECRET: must be at least ${MIN_OVERRIDE_SECRET_LENGTH} characters (it signs break-glass override tokens), got ${config.overrideSecret.length}`)
  }
  if (config.memory && config.warehouse !== undefined) {
    problems.push('--memory and --warehouse/ICEGUARD_WAREHOUSE cannot be combined: choose one')
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/** Builds a Config for code and tests: defaults plus the given fields, validated the same way. */
export function configFrom (fields: Partial<Record<keyof typeof OPTIONS, string | boolean>>, env: NodeJS.ProcessEnv = {}): Config {
  const argv: string[] = []
  for (const [name, value] of Object.entries(fields)) {
    if (value === true) argv.push(`--${name}`)
    else if (typeof value === 'string') argv.push(`--${name}=${value}`)
  }
  return loadConfig(argv, env)
}

function readRaw (argv: readonly string[], env: NodeJS.ProcessEnv, problems: string[]): Raw {
  const options: Record<string, { type: 'string' | 'boolean', short?: string }> = {}
  for (const [name, spec] of Object.entries(OPTIONS)) options[name] = { type: spec.type }
  // strict: false so that every problem is collected instead of stopping at the first one.
  const { values, positionals, tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true })
  for (const token of tokens) {
    if (token.kind !== 'option') continue
    const spec = OPTIONS[token.name]
    if (spec === undefined) problems.push(`${token.rawName}: unknown option (see --help)`)
    else if (spec.type === 'string' && token.value === undefined) problems.push(`${token.rawName}: needs a value`)
    else if (spec.type === 'boolean' && token.inlineValue === true) problems.push(`${token.rawName}: takes no value`)
  }
  for (const p of positionals) problems.push(`"${p}": unexpected argument (options start with --)`)

  const raw: Raw = {}
  for (const [name, spec] of Object.entries(OPTIONS)) {
    const v = values[name]
    if (v !== undefined) raw[name] = spec.type === 'string' && typeof v !== 'string' ? undefined : v
    else if (spec.env !== undefined && env[spec.env] !== undefined) raw[name] = env[spec.env]
  }
  return raw
}

function label (name: string): string {
  const env = OPTIONS[name]?.env
  return env === undefined ? `--${name}` : `--${name}/${env}`
}

function int (problems: string[], name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    problems.push(`${label(name)}: "${text}" is not a whole number from ${min} to ${max}`)
    return fallback
  }
  return Number(text)
}

function url (problems: string[], name: string, text: string | undefined): URL | undefined {
  if (text === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(text)
  } catch {
    problems.push(`${label(name)}: "${text}" is not a URL (expected http://host:port[/base/path])`)
    return undefined
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    problems.push(`${label(name)}: "${text}" must start with http:// or https://`)
    return undefined
  }
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
    problems.push(`${label(name)}: "${text}" must not carry a query, fragment or credentials`)
    return undefined
  }
  return parsed
}

const JWT_SETTINGS = ['admin-jwt-issuer', 'admin-jwt-audience', 'admin-jwt-claim', 'admin-jwt-read', 'admin-jwt-write'] as const

/**
 * Admin JWTs are accepted only with an issuer and an audience to check: without the audience any
 * token the identity provider issued to any application would open the admin API.
 */
function adminJwtConfig (problems: string[], str: (name: string) => string | undefined): AdminJwtConfig | undefined {
  const jwksText = str('admin-jwks-url')
  if (jwksText === undefined) {
    for (const name of JWT_SETTINGS) {
      if (str(name) !== undefined) problems.push(`${label(name)}: needs --admin-jwks-url/ICEGUARD_ADMIN_JWKS_URL`)
    }
    return undefined
  }
  const jwks = url(problems, 'admin-jwks-url', jwksText)
  const issuer = str('admin-jwt-issuer')
  const audience = str('admin-jwt-audience')
  if (issuer === undefined) problems.push(`${label('admin-jwt-issuer')}: required with --admin-jwks-url (the \`iss\` of the identity provider)`)
  if (audience === undefined) problems.push(`${label('admin-jwt-audience')}: required with --admin-jwks-url (the \`aud\` the tokens are issued for)`)
  const readValue = str('admin-jwt-read') ?? DEFAULTS.adminJwtRead
  const writeValue = str('admin-jwt-write') ?? DEFAULTS.adminJwtWrite
  if (readValue === writeValue) problems.push(`${label('admin-jwt-write')}: "${writeValue}" must differ from the read value`)
  if (jwks === undefined || issuer === undefined || audience === undefined) return undefined
  return { jwksUrl: jwks.href, issuer, audience, claim: str('admin-jwt-claim') ?? DEFAULTS.adminJwtClaim, readValue, writeValue }
}

function onOff (problems: string[], name: string, text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback
  const v = text.toLowerCase()
  if (v === 'on') return true
  if (v === 'off') return false
  problems.push(`${label(name)}: "${text}" is not on or off`)
  return fallback
}

/** `client_id:secret`; the message names the option, never the value (it holds a secret). */
function clientCredential (problems: string[], text: string | undefined): { clientId: string, secret: string } | undefined {
  if (text === undefined) return undefined
  const colon = text.indexOf(':')
  if (colon <= 0 || colon === text.length - 1) {
    problems.push('--catalog-credential/ICEGUARD_CATALOG_CREDENTIAL: must be client_id:secret')
    return undefined
  }
  return { clientId: text.slice(0, colon), secret: text.slice(colon + 1) }
}

function parseBool (name: string, text: string | boolean | undefined, problems: string[]): boolean {
  const v = String(text).trim().toLowerCase()
  if (['1', 'true', 'yes', 'on'].includes(v)) return true
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false
  problems.push(`${label(name)}: "${String(text)}" is not a boolean (true/false)`)
  return false
}

const UNITS: Readonly<Record<string, number>> = {
  '': 1, b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1000 ** 3, gib: 1024 ** 3
}

/** `1048576`, `512KiB`, `10MiB`, `10mb` → bytes; undefined when unreadable. */
export function parseBytes (text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim())
  if (m === null) return undefined
  const unit = UNITS[(m[2] ?? '').toLowerCase()]
  if (unit === undefined) return undefined
  const n = Math.floor(Number(m[1]) * unit)
  return Number.isSafeInteger(n) ? n : undefined
}

/** The same configuration pointed at another upstream (used for the embedded catalog). */
export function withUpstreamUrl (config: Config, upstreamUrl: string): Config {
  const parsed = new URL(upstreamUrl)
  return {
    ...config,
    upstreamUrl: parsed.href,
    upstreamOrigin: parsed.origin,
    upstreamBasePath: parsed.pathname.replace(/\/+$/, '')
  }
}

/**
 * A secret the policy names by its environment variable (a webhook's `secret-env`), read each
 * time it is used so a rotated secret applies without a restart; the policy file never holds it.
 */
export function secretFromEnv (name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}
