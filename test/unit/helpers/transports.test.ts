/**
 * The transport matrix (test/helpers/transports.ts): a suite runs once per transport, in one
 * process, the runs side by side, and every test knows the transport of the run it belongs to.
 */
import t from 'tap'
import { startRecordingUpstream } from '../../helpers/recording-upstream.js'
import { startProxy } from '../../helpers/proxy.js'
import { onEveryTransport, transportOf, TRANSPORTS, type Transport } from '../../helpers/transports.js'

t.test('a test outside any matrix is on the fast lane', async t => {
  t.equal(transportOf(t), 'fast lane')
  await t.test('and so is its subtest', async t => { t.equal(transportOf(t), 'fast lane') })
})

t.test('the suite runs once per transport; nested tests know their run', async t => {
  const seen: Transport[] = []
  const nested: Array<[Transport, Transport]> = []
  let started = 0
  let allStarted: () => void = () => {}
  const together = new Promise<void>((resolve) => { allStarted = resolve })
  await t.test('matrix', async t => {
    onEveryTransport(t, t => {
      t.test('a test of the suite', async t => {
        const transport = transportOf(t)
        seen.push(transport)
        // Side by side: each run waits here until all three have begun. Run one after another,
        // the first would wait for the others forever; the timer turns that into a failure.
        if (++started === TRANSPORTS.length) allStarted()
        const timer = setTimeout(allStarted, 5000)
        await together
        clearTimeout(timer)
        t.equal(started, TRANSPORTS.length, `${transport}: every run had begun before any finished`)
        await t.test('a nested test', async t => { nested.push([transport, transportOf(t)]) })
      })
    })
  })
  t.same([...seen].sort(), [...TRANSPORTS].sort(), 'one run per transport')
  t.same(nested.map(([run, inner]) => run === inner), [true, true, true], 'a nested test has its run\'s transport')
})

t.test('startProxy follows the run: a relay that opens with GET /v1/config, or node:http', async t => {
  const up = await startRecordingUpstream(t, (_req, res) => { res.end('{}') })
  const proxies = new Map<Transport, { url: string, direct: string, fastLane: boolean }>()
  await t.test('matrix', async t => {
    onEveryTransport(t, t => {
      t.test('start', async t => {
        const proxy = await startProxy(t, { upstream: up.url })
        proxies.set(transportOf(t), { url: proxy.url, direct: proxy.direct, fastLane: proxy.config.fastLane })
      })
    })
  })
  t.equal(proxies.get('fast lane')?.url, proxies.get('fast lane')?.direct, 'fast lane: clients reach iceguard itself')
  t.equal(proxies.get('fast lane')?.fastLane, true)
  t.not(proxies.get('config first')?.url, proxies.get('config first')?.direct, 'config first: clients reach the relay')
  t.equal(proxies.get('config first')?.fastLane, true)
  t.equal(proxies.get('node:http')?.url, proxies.get('node:http')?.direct)
  t.equal(proxies.get('node:http')?.fastLane, false, 'node:http: --fast-lane off')
})

t.test('a proxy started beneath a matrix but outside its runs is an error', async t => {
  let thrown: unknown
  await t.test('matrix', async t => {
    onEveryTransport(t, () => {})
    try {
      transportOf(t)
    } catch (err) {
      thrown = err
    }
  })
  t.match((thrown as Error | undefined)?.message, /outside onEveryTransport's runs/)
})

t.test('ICEGUARD_TEST_TRANSPORT runs one transport alone, and an unknown name is refused', async t => {
  const seen: Transport[] = []
  await t.test('one', async t => {
    onEveryTransport(t, t => { t.test('x', async t => { seen.push(transportOf(t)) }) }, { ICEGUARD_TEST_TRANSPORT: 'node:http' })
  })
  t.same(seen, ['node:http'])
  t.throws(() => { onEveryTransport(t, () => {}, { ICEGUARD_TEST_TRANSPORT: 'carrier pigeon' }) }, /ICEGUARD_TEST_TRANSPORT=carrier pigeon: expected one of fast lane, config first, node:http/)
})
