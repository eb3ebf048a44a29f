/**
 * A table with a history worth showing, made at the embedded catalog itself (the policy would
 * refuse the drop): schema 0 → 1 renames field 2 `customer` → `buyer`; 1 → 2 drops field 3
 * `quantity` and adds field 4, whose name is markup (column names are user input). Plus decisions
 * and overrides in the query API's shape for the in-memory sources.
 */
import type { DecisionRecord } from '../../src/console/decision-source.js'
import type { OverrideInForce } from '../../src/console/override-source.js'

export const HOSTILE = '<img src=x onerror="alert(1)">'

const ID = { id: 1, name: 'id', required: true, type: 'long' }
const CUSTOMER = { id: 2, name: 'customer', required: false, type: 'string' }
const QUANTITY = { id: 3, name: 'quantity', required: false, type: 'int' }

function evolve (fields: unknown[], schemaId: number): Record<string, unknown> {
  return {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': schemaId - 1 }],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': schemaId, 'identifier-field-ids': [1], fields } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }
}

async function post (url: string, body: unknown): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status !== 200) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`)
}

/** db.orders at the catalog, with the three schemas above. */
export async function makeOrdersHistory (catalogUrl: string): Promise<void> {
  await post(`${catalogUrl}/v1/namespaces`, { namespace: ['db'], properties: {} })
  await post(`${catalogUrl}/v1/namespaces/db/tables`, { name: 'orders', schema: { type: 'struct', 'identifier-field-ids': [1], fields: [ID, CUSTOMER, QUANTITY] } })
  await post(`${catalogUrl}/v1/namespaces/db/tables/orders`, evolve([ID, { ...CUSTOMER, name: 'buyer' }, QUANTITY], 1))
  await post(`${catalogUrl}/v1/namespaces/db/tables/orders`, evolve([ID, { ...CUSTOMER, name: 'buyer' }, { id: 4, name: HOSTILE, required: false, type: 'string' }], 2))
}

export const DECISIONS: DecisionRecord[] = [
  {
    id: 'd-1',
    time: '2026-11-30T09:00:00.000Z',
    table: { namespace: ['db'], name: 'orders' },
    kind: 'update-table',
    verdict: 'allow',
    principal: 'etl-bot',
    findings: [],
    changes: 'renamed field 2 customer → buyer',
    override: null
  },
  {
    id: 'd-2',
    time: '2026-12-01T10:15:00.000Z',
    table: { namespace: ['db'], name: 'orders' },
    kind: 'update-table',
    verdict: 'deny',
    principal: 'alice',
    findings: [{ rule: 'COLUMN_NO_DROP', severity: 'error', message: 'Cannot drop column quantity (field id 3): the policy forbids drops on db.*', 'field-id': 3, path: 'quantity' }],
    changes: 'dropped field 3 quantity',
    override: null
  },
  {
    id: 'd-3',
    time: '2026-12-02T08:00:00.000Z',
    table: { namespace: ['finance', '<script>'], name: 'ledger"><b>' },
    kind: 'update-table',
    verdict: 'warn',
    principal: `mallory ${HOSTILE}`,
    findings: [{ rule: 'FIELD_DOC_REQUIRED', severity: 'warn', message: `Column ${HOSTILE} has no doc`, 'field-id': 9, path: HOSTILE }],
    changes: [{ kind: 'field-added', 'field-id': 9, path: HOSTILE }],
    override: 'ovr-77'
  }
]

export const OVERRIDES: Array<OverrideInForce & { revoked?: boolean }> = [
  { id: 'ovr-1', principal: 'bob', table: 'db.orders', rules: ['COLUMN_NO_DROP'], expires: '2999-01-01T00:00:00.000Z', reason: 'planned cleanup of quantity' },
  { id: 'ovr-2', principal: 'bob', table: 'db.orders', rules: ['COLUMN_NO_DROP'], expires: '2000-01-01T00:00:00.000Z', reason: 'expired' },
  { id: 'ovr-3', principal: 'bob', table: 'db.orders', rules: ['COLUMN_NO_DROP'], expires: '2999-01-01T00:00:00.000Z', reason: 'revoked', revoked: true }
]
