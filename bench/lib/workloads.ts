/**
 * What the load generator sends, and what each proxy must answer for it.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { dataCommit, schemaCommit, type TableOptions } from './fixtures.js'
import type { Target, WorkloadName } from './options.js'

export interface Workload {
  name: WorkloadName
  what: string
  method: 'GET' | 'POST'
  path: string
  bodyFile?: string
  bodyBytes?: number
  /** Measured only in the one-connection latency comparison, not in the throughput cells. */
  latencyOnly?: boolean
  /**
   * Sent once on every connection before the measured requests, as PyIceberg's session and
   * iceberg-js's fetch open theirs with `GET /v1/config`.
   */
  opener?: string
  /** status each target must answer; the response bytes must equal direct's when it is 200 */
  expect: (target: Target) => number
  targets: (all: Target[]) => Target[]
}

// The stub's tables (upstream-stub.ts builds the same ones).
const SMALL: TableOptions = { table: 'small', columns: 50, snapshots: 3 }
const EVOLVING: TableOptions = { table: 'evolving', columns: 50, snapshots: 3, schemas: 20 }
const TABLES = '/v1/namespaces/bench/tables'

export function buildWorkloads (dir: string, picked: WorkloadName[]): Workload[] {
  const body = (name: string, json: string): { bodyFile: string, bodyBytes: number } => {
    const bodyFile = path.join(dir, `${name}.json`)
    writeFileSync(bodyFile, json)
    return { bodyFile, bodyBytes: Buffer.byteLength(json) }
  }
  const ok = (): number => 200
  const every = (all: Target[]): Target[] => all
  const iceguards = (t: Target): boolean => t === 'iceguard' || t === 'baseline'
  const gated = (all: Target[]): Target[] => all.filter(t => t === 'direct' || t === 'nginx' || iceguards(t))
  const all: Workload[] = [
    { name: 'load-small', what: 'loadTable, 50 columns (~8 KB)', method: 'GET', path: `${TABLES}/small`, expect: ok, targets: every },
    { name: 'load-small-warm', what: 'loadTable, 50 columns (~8 KB), on connections that began with GET /v1/config', method: 'GET', path: `${TABLES}/small`, opener: '/v1/config', expect: ok, targets: every },
    { name: 'load-large', what: 'loadTable, ~1 MB of metadata', method: 'GET', path: `${TABLES}/large`, expect: ok, targets: every },
    {
      name: 'data-commit',
      what: 'commit add-snapshot + set-snapshot-ref, ~5 KB (fast path)',
      method: 'POST',
      path: `${TABLES}/small`,
      ...body('data-commit', dataCommit(SMALL, 5 * 1024)),
      expect: ok,
      targets: every
    },
    {
      name: 'data-commit-warm',
      what: 'the data commit above, on connections that began with GET /v1/config',
      method: 'POST',
      path: `${TABLES}/small`,
      ...body('data-commit-warm', dataCommit(SMALL, 5 * 1024)),
      opener: '/v1/config',
      expect: ok,
      targets: every
    },
    {
      // The fast-path commit the gate's latency is compared with: the schema commit's own table,
      // so both answers carry the same metadata (~80 KB) and only the gate differs.
      name: 'data-commit-evolving',
      what: 'commit add-snapshot + set-snapshot-ref on the schema commit\'s table (fast path; latency baseline)',
      method: 'POST',
      path: `${TABLES}/evolving`,
      ...body('data-commit-evolving', dataCommit(EVOLVING, 5 * 1024)),
      expect: ok,
      latencyOnly: true,
      targets: all => all.filter(t => t === 'direct' || iceguards(t))
    },
    {
      name: 'schema-commit',
      what: 'commit add-schema + set-current-schema on a 50-column table with 20 schemas (full gate)',
      method: 'POST',
      path: `${TABLES}/evolving`,
      ...body('schema-commit', schemaCommit(EVOLVING, 'add-optional-column')),
      expect: ok,
      targets: gated
    },
    {
      // The plain case: the small table has one schema, so its base and the commit's answer are
      // ~9 KB; measured at one connection for the gate's CPU per commit.
      name: 'schema-commit-small',
      what: 'commit add-schema + set-current-schema on the 50-column table with one schema (full gate)',
      method: 'POST',
      path: `${TABLES}/small`,
      ...body('schema-commit-small', schemaCommit(SMALL, 'add-optional-column')),
      expect: ok,
      latencyOnly: true,
      targets: gated
    },
    {
      name: 'refused-commit',
      what: 'commit changing a long column to int (refused with 400)',
      method: 'POST',
      path: `${TABLES}/evolving`,
      ...body('refused-commit', schemaCommit(EVOLVING, 'long-to-int')),
      // Only iceguard refuses it; the stub and plain proxies would let it through.
      expect: t => (iceguards(t) ? 400 : 200),
      targets: all => all.filter(iceguards)
    }
  ]
  return all.filter(w => picked.includes(w.name))
}
