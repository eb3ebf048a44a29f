import t from 'tap'
import fc from 'fast-check'
import { ConfigError, DEFAULTS, loadConfig, parseBytes, withUpstreamUrl } from '../../../src/main/config.js'
import { ERRORS, GateError, renderError, upstreamError } from '../../../src/errors.js'
import { DATA_ACTIONS, hasContentCoding, needsGate } from '../../../src/json/commit-scan.js'
import { rewriteCatalogConfig } from '../../../src/edge/catalog-config.js'
import { forwardRequestHeaders, headersToObject, relayResponseHeaders } from '../../../src/upstream/headers.js'

t.test('config', async (t) => {
  t.test('defaults', async (t) => {
    const c = loadConfig([], {})
    t.equal(c.port, 8181)
    t.equal(c.host, '0.0.0.0')
    t.equal(c.upstreamUrl, undefined)
    t.equal(c.bodyLimit, 10 * 1024 * 1024)
    t.equal(c.logLevel, 'info')
    t.equal(c.assertions, 'inject')
    t.equal(c.memory, false)
    t.equal(c.upstreamConnectTimeout, DEFAULTS.upstreamConnectTimeout)
    t.equal(c.fastLane, true, 'the fast lane is on by default')
  })

  t.test('--fast-lane on|off, ICEGUARD_FAST_LANE', async (t) => {
    t.equal(loadConfig(['--fast-lane', 'off'], {}).fastLane, false)
    t.equal(loadConfig([], { ICEGUARD_FAST_LANE: 'OFF' }).fastLane, false)
    t.equal(loadConfig(['--fast-lane=on'], { ICEGUARD_FAST_LANE: 'off' }).fastLane, true, 'the flag wins')
    const err = t.throws(() => loadConfig(['--fast-lane', 'fast'], {})) as ConfigError
    t.same(err.problems, ['--fast-lane/ICEGUARD_FAST_LANE: "fast" is not on or off'])
  })

  t.test('flags win over env; base path kept without trailing slash', async (t) => {
    const c = loadConfig(['--port', '9000', '--upstream=http://cat:8181/api/catalog/', '--body-limit', '512KiB', '--memory', '--require-assertions'], {
      ICEGUARD_PORT: '1234',
      ICEGUARD_HOST: '127.0.0.1',
      ICEGUARD_LOG_LEVEL: 'DEBUG',
      ICEGUARD_ADMIN_TOKEN: 's3cret',
      ICEGUARD_POLICY: './policy.yaml',
      ICEGUARD_PUBLIC_URL: 'https://iceguard.example.com/'
    })
    t.equal(c.port, 9000)
    t.equal(c.host, '127.0.0.1')
    t.equal(c.upstreamOrigin, 'http://cat:8181')
    t.equal(c.upstreamBasePath, '/api/catalog')
    t.equal(c.bodyLimit, 512 * 1024)
    t.equal(c.memory, true)
    t.equal(c.logLevel, 'debug')
    t.equal(c.adminToken, 's3cret')
    t.equal(c.policyPath, './policy.yaml')
    t.equal(c.publicUrl, 'https://iceguard.example.com')
    t.equal(c.assertions, 'require')
  })

  t.test('ICEGUARD_ASSERTIONS and ICEGUARD_MEMORY from env', async (t) => {
    const c = loadConfig([], { ICEGUARD_ASSERTIONS: 'require', ICEGUARD_MEMORY: 'true', ICEGUARD_UPSTREAM_URL: 'http://u:1' })
    t.equal(c.assertions, 'require')
    t.equal(c.memory, true)
    t.equal(c.upstreamBasePath, '')
  })

  t.test('every bad value is reported at once', async (t) => {
    const err = t.throws(() => loadConfig(['--port', 'eighty', '--upstream', 'ftp://x', '--bogus', '--log-level', 'loud', '--body-limit', '10 parsecs', '--upstream-connect-timeout', '-5', 'stray'], {
      ICEGUARD_ASSERTIONS: 'maybe',
      ICEGUARD_PUBLIC_URL: 'not a url'
    })) as ConfigError
    t.type(err, ConfigError)
    const text = err.problems.join('\n')
    for (const needle of ['--port/ICEGUARD_PORT: "eighty"', '--upstream/ICEGUARD_UPSTREAM_URL: "ftp://x" must start with http', '--bogus: unknown option',
      '--log-level/ICEGUARD_LOG_LEVEL: "loud"', '--body-limit', '--upstream-connect-timeout', '"stray": unexpected argument',
      'ICEGUARD_ASSERTIONS: "maybe"', '--public-url/ICEGUARD_PUBLIC_URL: "not a url" is not a URL']) {
      t.ok(text.includes(needle), `mentions ${needle}`)
    }
    t.equal(err.problems.length, 9)
  })

  t.test('a flag without its value, query strings, memory+warehouse', async (t) => {
    const err = t.throws(() => loadConfig(['--upstream', 'http://u/x?y=1', '--memory', '--warehouse', '/w', '--port'], {})) as ConfigError
    t.match(err.problems.join('\n'), /--port: needs a value/)
    t.match(err.problems.join('\n'), /must not carry a query/)
    t.match(err.problems.join('\n'), /--memory and --warehouse/)
  })

  t.test('parseBytes', async (t) => {
    t.equal(parseBytes('1048576'), 1048576)
    t.equal(parseBytes('10MiB'), 10 * 1024 * 1024)
    t.equal(parseBytes('10mb'), 10_000_000)
    t.equal(parseBytes('1.5k'), 1536)
    t.equal(parseBytes('lots'), undefined)
    t.equal(parseBytes('5 furlongs'), undefined)
  })

  t.test('withUpstreamUrl', async (t) => {
    const c = withUpstreamUrl(loadConfig([], {}), 'http://127.0.0.1:5000/catalog')
    t.equal(c.upstreamOrigin, 'http://127.0.0.1:5000')
    t.equal(c.upstreamBasePath, '/catalog')
  })
})

t.test('errors', async (t) => {
  t.test('every catalogue entry renders an ErrorModel with code = status', async (t) => {
    for (const [name, def] of Object.entries(ERRORS)) {
      t.match(def.code, /^GATE_ERR_[A-Z_]+$/, name)
      const out = renderError(new GateError(def, `${name} happened`))
      t.equal(out.statusCode, def.status)
      t.same(JSON.parse(out.body), { error: { message: `${name} happened`, type: def.type, code: def.status } })
      t.equal(out.headers['content-type'], 'application/json')
    }
  })

  t.test('details go to stack', async (t) => {
    const body = new GateError(ERRORS.VALIDATION, 'Cannot drop id', { details: ['a', 'b'] }).toResponse()
    t.same(body, { error: { message: 'Cannot drop id', type: 'ValidationException', code: 400, stack: ['a', 'b'] } })
  })

  t.test('upstream failures by phase', async (t) => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const before = upstreamError(refused, false, true, 3)
    t.equal(before.statusCode, 503)
    t.equal(before.icebergType, 'ServiceUnavailableException')
    t.equal(before.headers['retry-after'], '3')
    t.equal(before.sent, false)
    const timeout = Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' })
    t.equal(upstreamError(timeout, true, true, 1).icebergType, 'CommitStateUnknownException')
    t.equal(upstreamError(timeout, true, true, 1).statusCode, 504)
    t.equal(upstreamError(timeout, true, false, 1).icebergType, 'GatewayTimeoutException')
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })
    t.equal(upstreamError(reset, true, true, 1).statusCode, 502)
    t.equal(upstreamError(reset, true, true, 1).icebergType, 'CommitStateUnknownException')
    t.equal(upstreamError(reset, true, false, 1).icebergType, 'BadGatewayException')
    t.same(upstreamError(reset, true, false, 1).headers, {})
  })
})

t.test('needsGate', async (t) => {
  const commit = (...actions: string[]): Buffer => Buffer.from(JSON.stringify({
    requirements: [{ type: 'assert-table-uuid', uuid: 'u' }],
    updates: actions.map((action) => ({ action, 'snapshot-id': 1 }))
  }))

  t.test('data-only commits skip the gate', async (t) => {
    for (const action of DATA_ACTIONS) t.equal(needsGate(commit(action)), false, action)
    t.equal(needsGate(commit('add-snapshot', 'set-snapshot-ref')), false)
    t.equal(needsGate(Buffer.from('{"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":3055729675574597004}},{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":3055729675574597004}]}')), false)
    t.equal(needsGate(Buffer.from('{ "updates" : [ { "action" :\n\t"ADD-SNAPSHOT" } ] }')), false, 'case-insensitive values, whitespace')
    t.equal(needsGate(Buffer.from('{"table-changes":[{"identifier":{"namespace":["a"],"name":"t"},"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}]}')), false, 'transaction')
    t.equal(needsGate(Buffer.from('{"updates":[{"action":"set-properties","updates":{"note":"say \\"hi\\" to action"}}]}')), false, 'escaped quotes in values')
    t.equal(needsGate(Buffer.from('{}')), false)
  })

  t.test('schema-relevant actions need the gate', async (t) => {
    for (const action of ['add-schema', 'set-current-schema', 'add-spec', 'set-default-spec', 'add-sort-order',
      'set-default-sort-order', 'upgrade-format-version', 'remove-schemas', 'remove-partition-specs', 'add-view-version',
      'set-current-view-version', 'some-future-action']) {
      t.equal(needsGate(commit(action)), true, action)
      t.equal(needsGate(commit('add-snapshot', action)), true, `${action} after a data action`)
    }
  })

  t.test('adversarial bodies', async (t) => {
    const bodies: Record<string, string> = {
      'upper case': '{"updates":[{"action":"ADD-SCHEMA"}]}',
      'mixed case': '{"updates":[{"action":"Add-Schema"}]}',
      'unicode escape in value': '{"updates":[{"action":"add\\u002dschema"}]}',
      'unicode escape in data value': '{"updates":[{"action":"add-snapshot","summary":{"x":"\\u00e9"}}]}',
      'unicode escape in key': '{"updates":[{"\\u0061ction":"add-schema"}]}',
      'other escape in value': '{"updates":[{"action":"add-snapshot\\n"}]}',
      'key in another case': '{"updates":[{"Action":"add-schema","action":"add-snapshot"}]}',
      'duplicate keys, last wins': '{"updates":[{"action":"add-snapshot","action":"add-schema"}]}',
      'duplicate keys, first wins': '{"updates":[{"action":"add-schema","action":"add-snapshot"}]}',
      'number action': '{"updates":[{"action":1}]}',
      'null action': '{"updates":[{"action":null}]}',
      'object action': '{"updates":[{"action":{"x":"add-snapshot"}}]}',
      'array action': '{"updates":[{"action":["add-snapshot"]}]}',
      'action key inside a property map': '{"updates":[{"action":"set-properties","updates":{"action":"add-schema"}}]}',
      'non-ASCII look-alike': '{"updates":[{"action":"add-snapshot\u0130"}]}',
      'unterminated string': '{"updates":[{"action":"add-snapsh',
      'not an object': '[{"action":"add-snapshot"}]',
      'empty body': '',
      garbage: 'hello',
      'control char in string': '{"updates":[{"action":"add-\tsnapshot"}]}',
      'invalid escape': '{"updates":[{"action":"add-snapshot","x":"\\q"}]}'
    }
    for (const [name, body] of Object.entries(bodies)) t.equal(needsGate(Buffer.from(body)), true, name)
  })

  t.test('an action smuggled inside a string value does not count as data-only', async (t) => {
    // The key/value pair lives inside a string: only the real action matters.
    t.equal(needsGate(Buffer.from('{"updates":[{"action":"add-schema","doc":"\\"action\\":\\"add-snapshot\\""}]}')), true)
    t.equal(needsGate(Buffer.from('{"updates":[{"action":"add-snapshot","doc":"\\"action\\":\\"add-schema\\""}]}')), false)
  })

  t.test('agrees with JSON.parse on generated commits', async (t) => {
    const action = fc.constantFrom(...DATA_ACTIONS, 'add-schema', 'set-current-schema', 'add-spec', 'ADD-SNAPSHOT', 'x')
    const value = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean())
    const update = fc.record({ action, props: fc.dictionary(fc.string(), value) })
    t.doesNotThrow(() => fc.assert(fc.property(fc.array(update, { maxLength: 6 }), (updates) => {
      const raw = Buffer.from(JSON.stringify({ updates }))
      const schemaish = updates.some((u) => !DATA_ACTIONS.has(u.action.toLowerCase()))
      const anyActionKeyInProps = updates.some((u) => Object.keys(u.props).some((k) => k.toLowerCase() === 'action'))
      const escapes = raw.includes('\\u')
      const gate = needsGate(raw)
      // Never a false "data-only" when a schema action is present.
      if (schemaish) return gate
      if (!anyActionKeyInProps && !escapes && !raw.includes('\\')) return gate === false
      return true
    }), { numRuns: 500 }))
  })

  t.test('content codings', async (t) => {
    t.equal(hasContentCoding(undefined), false)
    t.equal(hasContentCoding('identity'), false)
    t.equal(hasContentCoding('gzip'), true)
    t.equal(hasContentCoding(['gzip']), true)
  })
})

t.test('catalog config rewrite', async (t) => {
  const upstream = { defaults: { uri: 'http://up', clients: '4' }, overrides: { uri: 'http://up', prefix: 'wh' }, endpoints: ['GET /v1/{prefix}/namespaces'], 'idempotency-key-lifetime': 'PT1H' }
  t.same(rewriteCatalogConfig(upstream, undefined), { defaults: { clients: '4' }, overrides: { prefix: 'wh' }, endpoints: ['GET /v1/{prefix}/namespaces'], 'idempotency-key-lifetime': 'PT1H' })
  t.same(rewriteCatalogConfig(upstream, 'https://gate'), { defaults: { uri: 'https://gate', clients: '4' }, overrides: { uri: 'https://gate', prefix: 'wh' }, endpoints: ['GET /v1/{prefix}/namespaces'], 'idempotency-key-lifetime': 'PT1H' })
  t.same(rewriteCatalogConfig({ defaults: {}, overrides: {} }, 'https://gate'), { defaults: {}, overrides: {} }, 'no uri: nothing added')
  t.equal(rewriteCatalogConfig('x', undefined), 'x')
  t.equal(upstream.overrides.uri, 'http://up', 'input not mutated')
})

t.test('headers', async (t) => {
  t.test('request: hop-by-hop and Connection-named dropped, X-Forwarded-* added', async (t) => {
    const out = headersToObject(forwardRequestHeaders([
      'Host', 'proxy:8181', 'Connection', 'keep-alive, X-Secret-Hop', 'Keep-Alive', 'timeout=5', 'TE', 'trailers',
      'Transfer-Encoding', 'chunked', 'Upgrade', 'h2c', 'Proxy-Authorization', 'Basic x', 'Trailer', 'x', 'X-Secret-Hop', '1',
      'Expect', '100-continue', 'Authorization', 'Bearer T', 'Idempotency-Key', 'k1', 'If-None-Match', '"e"',
      'X-Iceberg-Access-Delegation', 'vended-credentials', 'X-Forwarded-For', '10.0.0.1', 'Content-Length', '5'
    ], { remoteAddress: '127.0.0.1', encrypted: false }))
    t.same(out, {
      authorization: 'Bearer T',
      'idempotency-key': 'k1',
      'if-none-match': '"e"',
      'x-iceberg-access-delegation': 'vended-credentials',
      'content-length': '5',
      'x-forwarded-for': '10.0.0.1, 127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'proxy:8181'
    })
  })

  t.test('request: front proxy values kept, content-length dropped for buffered bodies', async (t) => {
    const out = headersToObject(forwardRequestHeaders(['host', 'h', 'x-forwarded-proto', 'https', 'x-forwarded-host', 'public', 'content-length', '3'],
      { remoteAddress: '::1', encrypted: false }, true))
    t.same(out, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public', 'x-forwarded-for': '::1' })
  })

  t.test('response: hop-by-hop dropped, the rest relayed with case', async (t) => {
    const raw = ['Connection', 'keep-alive, X-Hop', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'X-Hop', '1',
      'ETag', '"abc"', 'Content-Encoding', 'gzip', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'].map((s) => Buffer.from(s))
    t.same(relayResponseHeaders(raw), ['ETag', '"abc"', 'Content-Encoding', 'gzip', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'])
    t.same(headersToObject(relayResponseHeaders(raw))['set-cookie'], ['a=1', 'b=2'])
  })
})
