/**
 * Spans of a gated write, through `@opentelemetry/api` only: the API is a no-op until an SDK is
 * registered (src/telemetry/start-tracing.ts, when the `OTEL_*` environment asks for it), and
 * nothing here runs unless `tracingOn()`, so a process without tracing pays one boolean test per
 * gated write and nothing per pass-through request.
 *
 * The tree of one gated write (docs/deployment.md):
 *
 *   iceguard.gate (SERVER)        child of the caller's `traceparent`, when it sent one
 *   ├─ iceguard.triage            what the write is: its tables, flows, or why it is refused
 *   ├─ iceguard.base_load (CLIENT)  the GET of a base; the catalog receives this span's context
 *   ├─ iceguard.judge             judging the changes against the bases and the policy
 *   ├─ iceguard.forward (CLIENT)  the commit sent on; the catalog receives this span's context
 *   └─ iceguard.decision.record   the decision queued for the decision log (stored in batches)
 *
 * Attributes name the table, the kind of write, statuses and the verdict; never a body, a header
 * value or a credential.
 */
import { context, propagation, trace, SpanKind, SpanStatusCode, type Attributes, type Context, type Span } from '@opentelemetry/api'
import type { IncomingHttpHeaders } from 'node:http'

let on = false

/** Whether an SDK was set up (start-tracing.ts). */
export function tracingOn (): boolean {
  return on
}

/** Set by start-tracing.ts once its provider is registered, and back when it shuts down. */
export function setTracingOn (value: boolean): void {
  on = value
}

const tracer = (): ReturnType<typeof trace.getTracer> => trace.getTracer('iceguard')

/** The caller's trace context from its `traceparent`/`tracestate` headers (W3C Trace Context). */
export function callerContext (headers: IncomingHttpHeaders): Context {
  return propagation.extract(context.active(), headers)
}

export function startServerSpan (name: string, parent: Context, attributes: Attributes): Span {
  return tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent)
}

/** Runs `fn` in a span child of the active one; the span records a throw and ends either way. */
export function inSpan<T> (name: string, attributes: Attributes, fn: (span: Span) => T): T {
  return tracer().startActiveSpan(name, { attributes }, (span) => {
    try {
      return fn(span)
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR })
      throw err
    } finally {
      span.end()
    }
  })
}

/**
 * Runs the async `fn` in a CLIENT span child of the active one, handing it the `traceparent` (and
 * `tracestate`) that carry this span's context, for the request it sends.
 */
export async function inClientSpan<T> (name: string, attributes: Attributes,
  fn: (carrier: Record<string, string>, span: Span) => Promise<T>): Promise<T> {
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes }, context.active())
  const carrier: Record<string, string> = {}
  propagation.inject(trace.setSpan(context.active(), span), carrier)
  try {
    return await fn(carrier, span)
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR })
    throw err
  } finally {
    span.end()
  }
}

/** Runs `fn` with `span` as the active span (its children, and the context propagated, follow it). */
export async function withSpan<T> (span: Span, parent: Context, fn: () => Promise<T>): Promise<T> {
  return await context.with(trace.setSpan(parent, span), fn)
}

export { SpanStatusCode }
