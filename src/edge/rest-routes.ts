/**
 * Every route of the Iceberg REST API iceguard knows, and what it does with each. These are facts:
 * the method, the path template and the operationId as the REST OpenAPI spells them
 * (apache/iceberg `open-api/rest-catalog-open-api.yaml`), plus iceguard's treatment:
 *
 * - `gate`: a write that can install or replace table or view metadata, or drop or rename a table
 *   or view (a view may read the table; the view index follows the views). The gate judges it (or
 *   refuses it) before anything is forwarded; `kind` names the gate's flow.
 * - `pass`: a write known to be safe to forward unjudged (it creates no schema: namespaces,
 *   unregistering, metrics, scan planning, signing, tokens).
 * - `read`: GET and HEAD.
 * - `config`: `GET /v1/config`, forwarded and rewritten (src/edge/catalog-config.ts).
 *
 * Deny by default: a request with a write method (anything but GET and HEAD) whose canonical path
 * is not one of the `gate` or `pass` routes here is refused (src/edge/classify.ts). A route the spec
 * gains later is refused until it is added here with a treatment.
 */

import type { GatedKind } from '../gate/gate-types.js'

/** The gate's flows (src/gate/judge-write.ts), one per write it judges. */
export type { GatedKind }

export type Treatment = 'gate' | 'pass' | 'read' | 'config'

export interface RestRoute {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'DELETE'
  /** The spec's template; `{prefix}` is optional in a request (REST spec: "An optional prefix in the path"). */
  readonly path: string
  readonly operationId: string
  readonly treatment: Treatment
  /** The gate's flow, for `gate` routes. */
  readonly kind?: GatedKind
  /** Where a route that is not in the OpenAPI comes from. */
  readonly source?: string
}

/**
 * The OpenAPI the table was checked against: every operation of that file is listed below, with
 * the same method, path and operationId (test/unit/edge/rest-routes.test.ts checks the table's own shape).
 */
export const SPEC_CHECKED = 'apache/iceberg open-api/rest-catalog-open-api.yaml at commit 7f879b11366e (main after 1.11.0, info.version 0.0.1)'

const P = '/v1/{prefix}'
const NS = `${P}/namespaces/{namespace}`
const TABLE = `${NS}/tables/{table}`
const VIEW = `${NS}/views/{view}`

export const REST_ROUTES: readonly RestRoute[] = [
  { method: 'GET', path: '/v1/config', operationId: 'getConfig', treatment: 'config' },
  // Deprecated in the spec, still served by Polaris and others: a token exchange, no metadata.
  { method: 'POST', path: '/v1/oauth/tokens', operationId: 'getToken', treatment: 'pass' },

  { method: 'GET', path: `${P}/namespaces`, operationId: 'listNamespaces', treatment: 'read' },
  { method: 'POST', path: `${P}/namespaces`, operationId: 'createNamespace', treatment: 'pass' },
  { method: 'GET', path: NS, operationId: 'loadNamespaceMetadata', treatment: 'read' },
  { method: 'HEAD', path: NS, operationId: 'namespaceExists', treatment: 'read' },
  { method: 'DELETE', path: NS, operationId: 'dropNamespace', treatment: 'pass' },
  { method: 'POST', path: `${NS}/properties`, operationId: 'updateProperties', treatment: 'pass' },

  { method: 'GET', path: `${NS}/tables`, operationId: 'listTables', treatment: 'read' },
  // Also the staged create (`stage-create: true`) that a create transaction completes by a commit.
  { method: 'POST', path: `${NS}/tables`, operationId: 'createTable', treatment: 'gate', kind: 'create-table' },
  { method: 'GET', path: `${NS}/functions`, operationId: 'listFunctions', treatment: 'read' },
  { method: 'GET', path: `${NS}/functions/{function}`, operationId: 'loadFunction', treatment: 'read' },
  { method: 'POST', path: `${TABLE}/plan`, operationId: 'planTableScan', treatment: 'pass' },
  { method: 'GET', path: `${TABLE}/plan/{plan-id}`, operationId: 'fetchPlanningResult', treatment: 'read' },
  { method: 'DELETE', path: `${TABLE}/plan/{plan-id}`, operationId: 'cancelPlanning', treatment: 'pass' },
  { method: 'POST', path: `${TABLE}/tasks`, operationId: 'fetchScanTasks', treatment: 'pass' },
  // The metadata file lives in storage the gate does not read: allowed or refused by policy (TABLE_NO_REGISTER).
  { method: 'POST', path: `${NS}/register`, operationId: 'registerTable', treatment: 'gate', kind: 'register-table' },
  { method: 'GET', path: TABLE, operationId: 'loadTable', treatment: 'read' },
  { method: 'POST', path: TABLE, operationId: 'updateTable', treatment: 'gate', kind: 'update-table' },
  { method: 'DELETE', path: TABLE, operationId: 'dropTable', treatment: 'gate', kind: 'drop-table' },
  { method: 'HEAD', path: TABLE, operationId: 'tableExists', treatment: 'read' },
  // Removes the catalog entry and leaves the files: registering them again is gated.
  { method: 'POST', path: `${TABLE}/unregister`, operationId: 'unregisterTable', treatment: 'pass' },
  { method: 'GET', path: `${TABLE}/credentials`, operationId: 'loadCredentials', treatment: 'read' },
  { method: 'POST', path: `${TABLE}/sign`, operationId: 'signRequest', treatment: 'pass' },
  { method: 'POST', path: `${P}/tables/rename`, operationId: 'renameTable', treatment: 'gate', kind: 'rename-table' },
  { method: 'POST', path: `${TABLE}/metrics`, operationId: 'reportMetrics', treatment: 'pass' },
  { method: 'POST', path: `${P}/transactions/commit`, operationId: 'commitTransaction', treatment: 'gate', kind: 'transaction' },

  { method: 'GET', path: `${NS}/views`, operationId: 'listViews', treatment: 'read' },
  { method: 'POST', path: `${NS}/views`, operationId: 'createView', treatment: 'gate', kind: 'create-view' },
  { method: 'GET', path: VIEW, operationId: 'loadView', treatment: 'read' },
  { method: 'POST', path: VIEW, operationId: 'replaceView', treatment: 'gate', kind: 'update-view' },
  { method: 'DELETE', path: VIEW, operationId: 'dropView', treatment: 'gate', kind: 'drop-view' },
  { method: 'HEAD', path: VIEW, operationId: 'viewExists', treatment: 'read' },
  { method: 'POST', path: `${P}/views/rename`, operationId: 'renameView', treatment: 'gate', kind: 'rename-view' },
  { method: 'POST', path: `${NS}/register-view`, operationId: 'registerView', treatment: 'gate', kind: 'register-view' },

  // Not in the OpenAPI: the Java S3 request signer posts here by default when the catalog names no
  // signer endpoint (apache/iceberg 1.10 `S3V4RestSignerClient.S3_SIGNER_DEFAULT_ENDPOINT`), and
  // its signer URI defaults to the catalog URI, so to iceguard. Signing installs no metadata.
  { method: 'POST', path: '/v1/aws/s3/sign', operationId: 'signRequest', treatment: 'pass', source: 'apache/iceberg 1.10 aws/.../S3V4RestSignerClient.java' }
]
