/**
 * Sets up the OpenTelemetry SDK when, and only when, the standard environment asks for it
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/):
 *
 * - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`: off.
 * - `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint set (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 *   `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) with no exporter named: on, exporting over OTLP/HTTP,
 *   protobuf or JSON after `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`/`OTEL_EXPORTER_OTLP_PROTOCOL`
 *   (`http/protobuf`, the specification's default, or `http/json`; `grpc` is refused).
 * - Anything else: off. The specification's default exporter is `otlp`, but a proxy in the commit
 *   path should not start sending spans to localhost:4318 because nobody said otherwise.
 *
 * The service is `OTEL_SERVICE_NAME`, else `iceguard`; `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER` and the batch settings are read by the SDK.
 * Contexts follow async calls through AsyncLocalStorage; W3C Trace Context is the propagator.
 * The SDK and the exporter are imported only then: a process without tracing never loads them.
 */
import { diag, DiagLogLevel } from '@opentelemetry/api'
import type { SpanExporter } from '@opentelemetry/sdk-trace-node'
import { setTracingOn } from './tracing.js'

export class TracingConfigError extends Error {}

export interface Tracing {
  /** Sends what is batched and stops; tracing is off afterwards. Never rejects. */
  shutdown (): Promise<void>
  /** Sends what is batched now. Never rejects. */
  flush (): Promise<void>
  /** For the start line: where spans go, over which protocol. */
  readonly describe: string
}

function tracesEndpoint (env: NodeJS.ProcessEnv): string | undefined {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  if (specific) return specific
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  // The signal path is appended to the general endpoint (specification: "Endpoint URLs for OTLP/HTTP").
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined
}

/** Whether the environment asks for traces; throws for a setting that cannot be honoured. */
function wanted (env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map(s => s.trim().toLowerCase()).filter(s => s !== '')
  if (exporters.length === 0) return tracesEndpoint(env) !== undefined
  if (exporters.includes('none')) return false
  const unknown = exporters.filter(e => e !== 'otlp')
  if (unknown.length > 0) throw new TracingConfigError(`Cannot set up tracing: OTEL_TRACES_EXPORTER=${unknown.join(',')} is not supported (use otlp or none)`)
  return true
}

function protocolOf (env: NodeJS.ProcessEnv): 'http/json' | 'http/protobuf' {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim().toLowerCase()
  if (protocol === 'http/json' || protocol === 'http/protobuf') return protocol
  throw new TracingConfigError(`Cannot set up tracing: OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported (use http/protobuf or http/json)`)
}

async function exporterFor (protocol: 'http/json' | 'http/protobuf', url: string): Promise<SpanExporter> {
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
    return new OTLPTraceExporter({ url })
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter({ url })
}

interface TracingOptions {
  /**
   * Told when spans cannot be exported (the collector is down, say): at most once a minute, with
   * how many reports were held back. Tracing is a degraded feature then, never a fault of iceguard.
   */
  readonly onError?: (message: string) => void
  readonly now?: () => number
}

/** The SDK's own error reports (its `diag` channel), passed on at most once a minute. */
function reportErrors (options: TracingOptions): (message: string) => void {
  const now = options.now ?? Date.now
  let last = -Infinity
  let held = 0
  return (message) => {
    if (now() - last < 60_000) { held++; return }
    last = now()
    options.onError?.(held > 0 ? `${message} (${held} more since the last report)` : message)
    held = 0
  }
}

/** Registers the SDK when the environment asks for traces; undefined when it does not. */
export async function startTracing (env: NodeJS.ProcessEnv = process.env, options: TracingOptions = {}): Promise<Tracing | undefined> {
  if (!wanted(env)) return undefined
  const protocol = protocolOf(env)
  const url = tracesEndpoint(env) ?? 'http://localhost:4318/v1/traces'
  const [{ W3CTraceContextPropagator }, { detectResources, envDetector, resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider }, exporter] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node'),
    exporterFor(protocol, url)
  ])
  // OTEL_RESOURCE_ATTRIBUTES is read from the process's environment; the service name from `env`.
  const name = env.OTEL_SERVICE_NAME?.trim()
  const resource = resourceFromAttributes({ 'service.name': 'iceguard' })
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(name ? resourceFromAttributes({ 'service.name': name }) : null)
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] })
  provider.register({ propagator: new W3CTraceContextPropagator() })
  const report = reportErrors(options)
  diag.setLogger({
    error: (message: string, ...args: unknown[]) => report(describe(message, args)),
    warn: () => {},
    info: () => {},
    debug: () => {},
    verbose: () => {}
  }, DiagLogLevel.ERROR)
  setTracingOn(true)
  return {
    describe: `${protocol} to ${url}`,
    // A collector that is down never fails a caller (a shutdown, say): it is reported.
    async flush () {
      await provider.forceFlush().catch((err: unknown) => report(describe('Cannot export spans', [err])))
    },
    async shutdown () {
      setTracingOn(false)
      await provider.shutdown().catch((err: unknown) => report(describe('Cannot export spans', [err])))
      diag.disable()
    }
  }
}

/** One line from the SDK's message and its arguments (errors by their message; no payloads). */
function describe (message: string, args: readonly unknown[]): string {
  const parts = args.map(a => a instanceof Error ? a.message : typeof a === 'string' ? a : '').filter(a => a !== '')
  const text = [message, ...parts].join(': ')
  return text.length > 300 ? `${text.slice(0, 299)}…` : text
}
