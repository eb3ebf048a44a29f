/**
 * The recorded client flows of test/fixtures/clients/<client>/<flow>.json, read as the replay and
 * the interop suites use them: steps with `include`s expanded, the client's headers, `{{name}}`
 * placeholders filled from earlier answers, JSON Pointers into answers, numbers kept lossless.
 * The format is described in test/integration/client-replay.test.ts; `{{now}}` is the time of the
 * replay in ms (a snapshot's `timestamp-ms`, which the client takes from its clock).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { isLosslessNumber, isSafeNumber, parse } from 'lossless-json'

export const CLIENTS_ROOT = new URL('../fixtures/clients/', import.meta.url)

export type Upstream = 'passthrough' | 'exact' | 'injected' | 'none'

export interface Expect {
  readonly status: number
  readonly upstream?: Upstream
  readonly injected?: readonly unknown[]
  /** What the answer's metadata-location must be, against the last one seen for the same table. */
  readonly metadataLocation?: 'new' | 'same' | 'null'
  readonly json?: Readonly<Record<string, unknown>>
  readonly text?: readonly string[]
  readonly error?: { readonly type: string, readonly messageIncludes?: readonly string[] }
  /** Rule ids the warnings header must name. */
  readonly warnings?: readonly string[]
}

export interface Step {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: unknown
  readonly bodyText?: string
  readonly notes?: Readonly<Record<string, string>>
  readonly expect: Expect
  readonly capture?: Readonly<Record<string, string>>
}

export interface Flow {
  readonly client: string
  readonly flow: string
  readonly title: string
  readonly statement: string
  readonly sources: readonly string[]
  readonly steps: readonly Step[]
}

export function readLossless (url: URL): Record<string, unknown> {
  return parse(readFileSync(url, 'utf8')) as Record<string, unknown>
}

export function loadFlow (client: string, file: string): Flow {
  const raw = readLossless(new URL(`${client}/${file}`, CLIENTS_ROOT))
  const steps: Step[] = []
  for (const s of (raw.steps as unknown[] | undefined) ?? []) {
    const include = (s as { include?: unknown }).include
    if (typeof include === 'string') steps.push(...loadFlow(client, include).steps)
    else steps.push(s as Step)
  }
  return { ...(raw as unknown as Flow), steps }
}

/** The flow files of one client (not the `_`-prefixed shared parts). */
export function flowFiles (client: string): string[] {
  return readdirSync(new URL(`${client}/`, CLIENTS_ROOT)).filter(f => f.endsWith('.json') && !f.startsWith('_')).sort()
}

export function clientHeaders (client: string): Record<string, string> {
  return (readLossless(new URL(`${client}/_client.json`, CLIENTS_ROOT)) as { headers: Record<string, string> }).headers
}

/** Numbers a double holds exactly become numbers, 64-bit ids their decimal text. */
export function canon (v: unknown): unknown {
  if (isLosslessNumber(v)) return isSafeNumber(v.value) ? Number(v.value) : v.value
  if (Array.isArray(v)) return v.map(canon)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canon(x)]))
  return v
}

/** `{{name}}` replaced by what was captured under that name (a whole-string placeholder keeps the value's type). */
export function fill (v: unknown, vars: Readonly<Record<string, unknown>>): unknown {
  if (typeof v === 'string') {
    const lookup = (name: string): unknown => {
      if (!Object.hasOwn(vars, name)) throw new Error(`fixture uses {{${name}}} before capturing it`)
      return vars[name]
    }
    const whole = /^\{\{(\w+)\}\}$/.exec(v)
    if (whole !== null) return lookup(whole[1] as string)
    return v.replace(/\{\{(\w+)\}\}/g, (_m, name: string) => String(lookup(name)))
  }
  if (isLosslessNumber(v) || v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(x => fill(x, vars))
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, vars)]))
}

export const MISSING = Symbol('missing')

export function pointer (doc: unknown, ptr: string): unknown {
  if (ptr === '') return doc
  let cur: unknown = doc
  for (const raw of ptr.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return MISSING
    cur = (cur as Record<string, unknown>)[key]
  }
  return cur
}
