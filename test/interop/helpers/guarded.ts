/**
 * What every engine suite runs against: a fresh Iceberg REST fixture, iceguard in front of it with
 * the interop policy (the spec rules, no column drops in namespace `guarded`, no change that breaks
 * a view in namespace `reporting`: test/interop/fixtures/guarded-policy.yaml) and its decision log in a temp folder.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { startProxy, type RunningProxy } from '../../helpers/proxy.js'
import { startCaptureHop, type CaptureHop } from './capture.js'
import { startFixture, type RunningFixture } from './fixture.js'

export const guardedPolicy = new URL('../fixtures/guarded-policy.yaml', import.meta.url).pathname

export interface Guarded {
  readonly fixture: RunningFixture
  readonly proxy: RunningProxy
  /** Where the engine connects: iceguard, or the capture hop in front of it. */
  readonly clientUrl: string
  /** With `capture`: every exchange between the engine and iceguard. */
  readonly capture?: CaptureHop
  /** A scratch folder for the engine, removed on teardown. */
  readonly scratch: string
  /** GET /admin/v1/decisions with these query parameters. */
  decisions (query: Record<string, string>): Promise<Array<Record<string, any>>>
  /** GET on iceguard's admin API (`/admin/v1/…`), the JSON answer. */
  admin (path: string): Promise<Record<string, any>>
  /** The table's current schema as the catalog holds it, read from the fixture directly. */
  currentFields (namespace: string, table: string): Promise<Array<[number, string, unknown]>>
}

export async function startGuarded (t: Test, opts: { capture?: boolean } = {}): Promise<Guarded> {
  const fixture = await startFixture()
  t.teardown(() => fixture.stop())
  const scratch = mkdtempSync(join(tmpdir(), 'iceguard-engine-'))
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }))
  const proxy = await startProxy(t, { upstream: fixture.url, policy: guardedPolicy, 'state-dir': join(scratch, 'state') })
  const capture = opts.capture === true ? await startCaptureHop(t, () => proxy.url) : undefined
  return {
    fixture,
    proxy,
    clientUrl: capture?.url ?? proxy.url,
    ...(capture !== undefined && { capture }),
    scratch,
    async decisions (query) {
      const res = await fetch(`${proxy.direct}/admin/v1/decisions?${new URLSearchParams(query).toString()}`)
      const body = await res.json() as { decisions?: Array<Record<string, any>> }
      return body.decisions ?? []
    },
    async admin (path) {
      const res = await fetch(`${proxy.direct}${path}`)
      return await res.json() as Record<string, any>
    },
    async currentFields (namespace, table) {
      const res = await fetch(`${fixture.url}/v1/namespaces/${namespace}/tables/${table}`)
      const body = await res.json() as { metadata: { schemas: Array<{ 'schema-id': number, fields: Array<{ id: number, name: string, type: unknown }> }>, 'current-schema-id': number } }
      const current = body.metadata.schemas.find(s => s['schema-id'] === body.metadata['current-schema-id'])
      return (current?.fields ?? []).map(f => [f.id, f.name, f.type])
    }
  }
}
