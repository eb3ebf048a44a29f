/**
 * The triage (src/edge/classify.ts) end to end, on every transport and on fresh and warm connections, against a recording upstream:
 * unrecognised writes, PUT and PATCH, bodies on GET and HEAD, and fragments are
 * refused with an ErrorModel and nothing is forwarded; canonical targets are what the upstream
 * receives (a Java-style `%7E` name is forwarded as `~`, a Java-style `+` as `%20`, and judged so); registerView is
 * allowed or refused by the registration policy and audited.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { loggerOptions } from '../../src/main/app.js'
import { startProxy, startRecordingUpstream, type ProxyOptions, type RecordingUpstream, type RunningProxy } from '../helpers/index.js'
import { fixtureMeta, fixtureResponder, schemaCommitFor } from '../helpers/fault-upstream.js'
import { exchange, RawConnection, requestBytes, TRANSPORTS, type RawAnswer } from '../helpers/raw-http.js'
import { onEveryTransport } from '../helpers/transports.js'

interface World {
  readonly up: RecordingUpstream
  readonly proxy: RunningProxy
  readonly port: number
  readonly audits: () => Array<Record<string, unknown>>
}

/** An upstream serving the fixture table for every GET and `{}` for every write. */
async function world (t: Test, policy = 'builtin:spec'): Promise<World> {
  const up = await startRecordingUpstream(t, fixtureResponder)
  const lines: string[] = []
  const stream = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line)
      cb()
    }
  })
  const proxy = await startProxy(t, {
    upstream: up.url,
    policy,
    app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream } }
  } as unknown as ProxyOptions)
  const audits = (): Array<Record<string, unknown>> => lines
    .map(l => JSON.parse(l) as { component?: string, audit?: Record<string, unknown> })
    .filter(l => l.component === 'audit' && l.audit !== undefined)
    .map(l => l.audit as Record<string, unknown>)
  return { up, proxy, port: Number(new URL(proxy.url).port), audits }
}

/** Upstream requests other than the `GET /v1/config` that warms a connection. */
function arrivedSince (up: RecordingUpstream, before: number): string[] {
  return up.requests.slice(before).filter(r => !r.url.startsWith('/v1/config')).map(r => `${r.method} ${r.url}`)
}

function isRefusal (t: Test, answer: RawAnswer, status: number, message: RegExp, what: string): void {
  t.equal(answer.status, status, `${what}: ${status}`)
  const error = (JSON.parse(answer.body) as { error?: { code?: number, type?: string, message?: string } }).error
  t.equal(error?.code, status, `${what}: an ErrorModel with code ${status}`)
  t.equal(error?.type, status === 403 ? 'ForbiddenException' : 'BadRequestException', `${what}: type`)
  t.match(error?.message, message, `${what}: the message names the problem`)
}

const DATA_COMMIT = '{"updates":[{"action":"set-properties","updates":{"k":"v"}}]}'

onEveryTransport(t, t => {
  for (const { transport, name } of TRANSPORTS) {
    t.test(`deny by default: ${name}`, async t => {
      const { up, port } = await world(t)
      const refused: Array<[string, string, string | undefined, Record<string, string> | undefined, RegExp]> = [
        ['POST', '/v1/namespaces/db/things', DATA_COMMIT, undefined, /^Cannot forward POST \/v1\/namespaces\/db\/things: not a route of the Iceberg REST API/],
        ['POST', '/v1/namespaces/db', DATA_COMMIT, undefined, /not a route/],
        ['POST', '/v1/config', '{}', undefined, /not a route/],
        ['PUT', '/v1/namespaces/db/tables/t', DATA_COMMIT, undefined, /^Cannot forward PUT .*not a route/],
        ['PATCH', '/v1/namespaces/db/tables/t', DATA_COMMIT, undefined, /^Cannot forward PATCH .*not a route/],
        ['DELETE', '/v1/transactions/commit', undefined, undefined, /not a route/],
        ['GET', '/v1/namespaces/db/tables/t', DATA_COMMIT, undefined, /GET request must not carry a body/],
        ['HEAD', '/v1/namespaces/db/tables/t', DATA_COMMIT, undefined, /HEAD request must not carry a body/],
        ['POST', '/v1/namespaces/db/tables/t#/x', DATA_COMMIT, undefined, /fragment/],
        ['POST', '/v1/namespaces/db/tables/t;x=1', DATA_COMMIT, undefined, /path parameter/],
        ['POST', '/v1/namespaces/db/tables/t/', DATA_COMMIT, undefined, /ends with "\/"/],
      ]
      for (const [method, target, body, headers, message] of refused) {
        const before = up.requests.length
        const answer = await exchange(port, transport, { method, target, body, headers })
        if (method === 'HEAD') {
          t.equal(answer.status, 400, `${method} ${target}: 400`)
        } else {
          isRefusal(t, answer, 400, message, `${method} ${target}`)
          t.match(answer.body, /nothing was forwarded/, `${method} ${target}: says nothing was forwarded`)
        }
        t.same(arrivedSince(up, before), [], `${method} ${target}: nothing reached the upstream`)
      }
      // A GET with a chunked body (node:http frames it on either transport).
      const before = up.requests.length
      const chunked = await exchange(port, transport, { method: 'GET', target: '/v1/namespaces', headers: { 'transfer-encoding': 'chunked' }, body: undefined })
      isRefusal(t, chunked, 400, /GET request must not carry a body/, 'GET with Transfer-Encoding')
      t.same(arrivedSince(up, before), [], 'GET with Transfer-Encoding: nothing forwarded')
    })

    t.test(`canonical targets are what the upstream receives: ${name}`, async t => {
      const { up, port, audits } = await world(t)
      const sent: Array<[string, string, string | undefined, string]> = [
      // Java's URLEncoder writes `~` as %7E (RESTUtil.encodeString): judged as `~`, forwarded as `~`.
        ['GET', '/v1/namespaces/db/tables/a%7Eb?snapshots=all&x=%7E+', undefined, '/v1/namespaces/db/tables/a~b?snapshots=all&x=%7E+'],
        ['POST', '/v1/namespaces/db/TABLES/t', DATA_COMMIT, '/v1/namespaces/db/tables/t'],
        ['POST', '/v1/namespaces/db/t%61bles/t?x=%61', DATA_COMMIT, '/v1/namespaces/db/tables/t?x=%61'],
        ['POST', '/V1/Transactions/Commit', '{"table-changes":[{"identifier":{"namespace":["db"],"name":"t"},"updates":[{"action":"set-properties","updates":{}}]}]}', '/v1/transactions/commit'],
        ['POST', '/v1/namespaces/db/tables/t', DATA_COMMIT, '/v1/namespaces/db/tables/t'],
        ['POST', '/v1/wh/NAMESPACES/db/properties', '{"updates":{"a":"b"}}', '/v1/wh/namespaces/db/properties'],
        ['DELETE', '/v1/namespaces/db/Tables/a+b', undefined, '/v1/namespaces/db/tables/a%20b'],
        // The Java client's space: judged as a space, forwarded as %20.
        ['POST', '/v1/namespaces/sales+eu/tables/orders', DATA_COMMIT, '/v1/namespaces/sales%20eu/tables/orders']
      ]
      for (const [method, target, body, forwarded] of sent) {
        const before = up.requests.length
        const answer = await exchange(port, transport, { method, target, body })
        t.equal(answer.status, 200, `${method} ${target}: ${answer.body}`)
        t.same(arrivedSince(up, before), [`${method} ${forwarded}`], `${method} ${target} arrived as ${forwarded}`)
        t.equal(up.requests.at(-1)?.body.toString(), body ?? '', 'the body byte for byte')
      }

      // A schema change to a table Java names with %7E: the base load and the commit both name `a~b`.
      const before = up.requests.length
      const schema = JSON.stringify(schemaCommitFor(fixtureMeta()))
      const judged = await exchange(port, transport, { method: 'POST', target: '/v1/namespaces/db/tables/a%7Eb', body: schema })
      t.equal(judged.status, 200, `judged and forwarded: ${judged.body}`)
      t.same(arrivedSince(up, before), ['GET /v1/namespaces/db/tables/a~b?snapshots=refs', 'POST /v1/namespaces/db/tables/a~b'],
        'the gate loaded and the upstream received the table it judged')
      t.same(audits().at(-1)?.tables, ['db.a~b'], 'audited as db.a~b')
    })

    t.test(`registerView is gated like registerTable: ${name}`, async t => {
      const dir = t.testdir({})
      const policy = join(dir, 'policy.yaml')
      writeFileSync(policy, 'version: 1\nextends: builtin:spec\nnamespaces:\n  locked:\n    rules:\n      TABLE_NO_REGISTER: error\n')
      const { up, port, audits } = await world(t, policy)
      const body = JSON.stringify({ name: 'daily', 'metadata-location': 's3://w/db/daily/metadata/00001.gz.metadata.json' })

      let before = up.requests.length
      const allowed = await exchange(port, transport, { method: 'POST', target: '/v1/namespaces/db/register-view', body })
      t.equal(allowed.status, 200, `allowed where the policy allows it: ${allowed.body}`)
      // Once accepted, the registered view is loaded for the view index (docs/view-index.md).
      t.same(arrivedSince(up, before), ['POST /v1/namespaces/db/register-view', 'GET /v1/namespaces/db/views/daily'], 'forwarded once, on its own path')
      t.equal(up.requests.filter(r => r.method === 'POST').at(-1)?.body.toString(), body, 'byte for byte')
      let audit = audits().at(-1)
      t.equal(audit?.kind, 'register-view', 'audited as register-view')
      t.same(audit?.tables, ['db.daily'])
      t.equal(audit?.verdict, 'allow')
      t.equal(audit?.forwarded, true)

      before = up.requests.length
      const refused = await exchange(port, transport, { method: 'POST', target: '/v1/NAMESPACES/locked/Register-View', body })
      isRefusal(t, refused, 403, /^Cannot register view locked\.daily: the policy does not allow registering views in this scope \(TABLE_NO_REGISTER is error/, 'refused by policy')
      t.same(arrivedSince(up, before), [], 'nothing forwarded')
      audit = audits().at(-1)
      t.equal(audit?.kind, 'register-view')
      t.same(audit?.tables, ['locked.daily'])
      t.equal(audit?.verdict, 'refused')
      t.equal(audit?.forwarded, false)
    })
  }

  t.test('a refusal on a kept-alive connection leaves it usable', async t => {
    const { up, port } = await world(t)
    const conn = await RawConnection.open(port)
    t.teardown(() => conn.close())
    const config = await conn.send(requestBytes({ method: 'GET', target: '/v1/config' }), 'GET')
    t.equal(config.status, 200)
    const refused = await conn.send(requestBytes({ method: 'POST', target: '/v1/namespaces/db/things', body: DATA_COMMIT }), 'POST')
    t.equal(refused.status, 400)
    const next = await conn.send(requestBytes({ method: 'GET', target: '/v1/namespaces/db/tables/t' }), 'GET')
    t.equal(next.status, 200, 'the next request on the connection is served')
    t.same(arrivedSince(up, 0), ['GET /v1/namespaces/db/tables/t'])
  })
})
