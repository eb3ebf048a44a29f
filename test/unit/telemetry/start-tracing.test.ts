/**
 * When the OTEL_* environment turns tracing on (src/telemetry/start-tracing.ts): never by default,
 * never when told `none` or disabled, and a setting that cannot be honoured stops start-up with a
 * message naming it; a collector that is down is reported, not thrown. Spans reaching a collector
 * are covered end to end by test/integration/observability.test.ts.
 */
import net from 'node:net'
import t from 'tap'
import { trace } from '@opentelemetry/api'
import { startTracing, TracingConfigError } from '../../../src/telemetry/start-tracing.js'
import { tracingOn } from '../../../src/telemetry/tracing.js'

t.test('off unless asked', async t => {
  t.equal(await startTracing({}), undefined, 'no OTEL_* variable: off')
  t.equal(await startTracing({ OTEL_SERVICE_NAME: 'iceguard' }), undefined, 'a service name alone: off')
  t.equal(await startTracing({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), undefined, 'a protocol alone: off')
  t.equal(await startTracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), undefined, 'exporter none wins over an endpoint')
  t.equal(await startTracing({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }), undefined, 'OTEL_SDK_DISABLED wins')
  t.equal(tracingOn(), false, 'and nothing was registered')
})

t.test('settings that cannot be honoured are refused, naming them', async t => {
  await t.rejects(startTracing({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    new TracingConfigError('Cannot set up tracing: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported (use http/protobuf or http/json)'))
  await t.rejects(startTracing({ OTEL_TRACES_EXPORTER: 'zipkin' }), /OTEL_TRACES_EXPORTER=zipkin is not supported/)
  await t.rejects(startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }), /grpc/,
    'an endpoint alone asks for traces, so its protocol is checked too')
  t.equal(tracingOn(), false)
})

t.test('spans that cannot be exported are reported, at most once a minute, and nothing throws', async t => {
  // A port nobody listens on: bound, then closed.
  const server = net.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  await new Promise<void>(resolve => server.close(() => resolve()))
  // The exporter retries a refused connection until its timeout, read from the process's environment.
  const timeout = process.env.OTEL_EXPORTER_OTLP_TIMEOUT
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '500'
  t.teardown(() => { if (timeout === undefined) delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT; else process.env.OTEL_EXPORTER_OTLP_TIMEOUT = timeout })
  const reports: string[] = []
  const tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    { onError: (message) => reports.push(message) })
  t.ok(tracing)
  t.teardown(async () => { await tracing?.shutdown() })
  t.equal(tracingOn(), true)
  for (let i = 0; i < 2; i++) {
    trace.getTracer('test').startSpan(`span ${i}`).end()
    await tracing?.flush()
  }
  t.equal(reports.length, 1, 'two failed exports, one report')
  t.match(reports[0], /ECONNREFUSED|export|connect/i, 'naming the failure')
})
