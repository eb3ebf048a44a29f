/**
 * The hand-rolled per-request series (src/metrics/hot-series.ts) as prom-client's registry renders
 * them: counters by label set however the labels were written, histograms with cumulative buckets,
 * `+Inf`, sum and count; and the kinds answers are timed under (src/edge/answer-kind.ts).
 */
import t from 'tap'
import { Registry } from 'prom-client'
import type { Metric } from 'prom-client'
import { HotCounter, HotHistogram } from '../../../src/metrics/hot-series.js'
import { answerKind } from '../../../src/edge/answer-kind.js'

t.test('counters and histograms render in the exposition format through prom-client', async t => {
  const registry = new Registry()
  const counter = new HotCounter('x_requests_total', 'Requests.')
  const histogram = new HotHistogram('x_duration_seconds', 'Durations.', [0.1, 0.01, 1])
  registry.registerMetric(counter as unknown as Metric)
  registry.registerMetric(histogram as unknown as Metric)
  const bound = counter.labels({ status: '200', method: 'GET' })
  bound.inc()
  bound.inc()
  counter.inc({ method: 'GET', status: '200' }, 3)
  counter.inc({ method: 'POST', status: 'a "quoted"\nvalue' })
  t.equal(counter.value({ status: '200', method: 'GET' }), 5, 'one series whatever the label order')
  const timer = histogram.labels({ kind: 'load' })
  for (const v of [0.005, 0.01, 0.05, 0.5, 2]) timer.observe(v)
  t.equal(histogram.count({ kind: 'load' }), 5)

  const text = await registry.metrics()
  t.match(text, /^# TYPE x_requests_total counter$/m)
  t.match(text, /^x_requests_total\{method="GET",status="200"\} 5$/m, 'labels printed in name order')
  t.match(text, /^x_requests_total\{method="POST",status="a \\"quoted\\"\\nvalue"\} 1$/m, 'label values escaped')
  t.match(text, /^# TYPE x_duration_seconds histogram$/m)
  const bucket = (le: string): number => Number(new RegExp(`^x_duration_seconds_bucket\\{kind="load",le="${le.replace('+', '\\+')}"\\} (\\d+)$`, 'm').exec(text)?.[1])
  t.same([bucket('0.01'), bucket('0.1'), bucket('1'), bucket('+Inf')], [2, 3, 4, 5], 'buckets are cumulative, bounds sorted, an observation on a bound counted in it')
  t.match(text, /^x_duration_seconds_sum\{kind="load"\} 2\.565$/m)
  t.match(text, /^x_duration_seconds_count\{kind="load"\} 5$/m)
})

t.test('answer kinds', async t => {
  t.equal(answerKind('passthrough', 'GET', false), 'load')
  t.equal(answerKind('passthrough', 'HEAD', false), 'load')
  t.equal(answerKind('passthrough', 'DELETE', false), 'write')
  t.equal(answerKind('update-table', 'POST', false), 'commit', 'a data commit forwarded from its bytes')
  t.equal(answerKind('update-table', 'POST', true), 'gated-commit')
  t.equal(answerKind('create-table', 'POST', true), 'gated-commit')
  t.equal(answerKind('config', 'GET', false), 'config')
  t.equal(answerKind('refused', 'GET', false), 'refused')
  t.equal(answerKind('local', 'GET', false), 'admin')
})
