/**
 * When the OTEL_* environment turns tracing on (src/telemetry/start-tracing.ts): never by default,
 * never when told `none` or disabled, and a setting that cannot be honoured stops start-up with a
 * message naming it. Turning it on is covered end to end by test/integration/observability.test.ts.
 */
import t from 'tap'
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
