/**
 * OpenAPI path items for the Iceberg REST writes the gate intercepts (REST spec updateTable,
 * commitTransaction, createTable), with and without the `{prefix}` segment: the Java client drops
 * the segment when no prefix is configured. The answers are the spec's, plus what the gate adds.
 */
const errorRef = { $ref: '#/components/schemas/IcebergErrorResponse' }

function error (description: string, headers?: Record<string, unknown>) {
  return { description, ...(headers !== undefined && { headers }), content: { 'application/json': { schema: errorRef } } }
}

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before retrying; nothing was forwarded.', schema: { type: 'integer' } } }
const WARNINGS = { 'X-Iceguard-Warnings': { description: 'Warnings the policy let through (rule ids and fields), when there are any.', schema: { type: 'string' } } }

const COMMON_ERRORS = {
  400: error('Refused by the gate (a spec or policy rule, one `stack` line per finding, each naming its rule and its documentation), or a malformed request. Final: clients do not retry.'),
  401: error('The upstream catalog refused the credentials (relayed).'),
  403: error('The upstream catalog refused access (relayed), or a policy refused the write.'),
  404: error('The namespace or table does not exist (relayed).'),
  409: error('CommitFailedException: a requirement no longer holds (the table changed since the client read it). Clients may retry.'),
  502: error('CommitStateUnknownException: the commit was forwarded and its answer was lost.'),
  503: error('The upstream catalog could not be reached to judge the write; nothing was forwarded. Retry after `Retry-After`.', RETRY_AFTER),
  504: error('CommitStateUnknownException: the commit was forwarded and no answer came in time.')
}

const namespaceParam = {
  name: 'namespace',
  in: 'path',
  required: true,
  description: 'Namespace levels joined by the unit separator (`%1F`).',
  schema: { type: 'string' },
  examples: { nested: { value: 'accounting%1Ftax' } }
}
const tableParam = { name: 'table', in: 'path', required: true, schema: { type: 'string' } }
const prefixParam = { name: 'prefix', in: 'path', required: true, description: 'The catalog prefix from `/v1/config` `overrides.prefix`.', schema: { type: 'string' } }
const overrideHeader = {
  name: 'X-Iceguard-Override',
  in: 'header',
  required: false,
  description: 'A break-glass token (`iceguard override`): the named rules\' errors become warnings on this table until it expires.',
  schema: { type: 'string' }
}

function json (ref: string) {
  return { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } }
}

function updateTable (withPrefix: boolean) {
  return {
    post: {
      operationId: withPrefix ? 'updateTableWithPrefix' : 'updateTable',
      tags: ['iceberg'],
      summary: 'Commit updates to a table (gated)',
      description: 'Commits that only add data go straight through. Commits that change a schema, partition spec or sort order are judged against ' +
        'the table\'s current metadata (loaded with the caller\'s credentials) and the policy, then forwarded byte for byte or refused.',
      security: [{ catalogAuth: [] }, {}],
      parameters: [...(withPrefix ? [prefixParam] : []), namespaceParam, tableParam, overrideHeader],
      requestBody: { required: true, content: json('CommitTableRequest') },
      responses: { 200: { description: 'Committed (the upstream\'s answer).', headers: WARNINGS, content: json('CommitTableResponse') }, ...COMMON_ERRORS }
    }
  }
}

function commitTransaction (withPrefix: boolean) {
  return {
    post: {
      operationId: withPrefix ? 'commitTransactionWithPrefix' : 'commitTransaction',
      tags: ['iceberg'],
      summary: 'Commit updates to several tables atomically (gated, all-or-nothing)',
      description: 'Every table change is judged; one refusal refuses the whole transaction and nothing is forwarded.',
      security: [{ catalogAuth: [] }, {}],
      parameters: [...(withPrefix ? [prefixParam] : []), overrideHeader],
      requestBody: { required: true, content: json('CommitTransactionRequest') },
      responses: { 204: { description: 'Committed.', headers: WARNINGS }, ...COMMON_ERRORS }
    }
  }
}

function createTable (withPrefix: boolean) {
  return {
    post: {
      operationId: withPrefix ? 'createTableWithPrefix' : 'createTable',
      tags: ['iceberg'],
      summary: 'Create a table (gated)',
      description: 'The new schema is checked against the spec\'s structural rules and the policy (names, required columns, contracts) before the create is forwarded. ' +
        '`stage-create` is judged the same way; the commit that completes it is judged as an updateTable.',
      security: [{ catalogAuth: [] }, {}],
      parameters: [...(withPrefix ? [prefixParam] : []), namespaceParam, overrideHeader],
      requestBody: { required: true, content: json('CreateTableRequest') },
      responses: {
        200: { description: 'Created (the upstream\'s answer).', headers: WARNINGS, content: json('LoadTableResult') },
        ...COMMON_ERRORS,
        409: error('The table already exists (relayed).')
      }
    }
  }
}

/** The gated Iceberg routes as OpenAPI path items, keyed by path. */
export function icebergPaths (): Record<string, unknown> {
  return {
    '/v1/namespaces/{namespace}/tables': createTable(false),
    '/v1/{prefix}/namespaces/{namespace}/tables': createTable(true),
    '/v1/namespaces/{namespace}/tables/{table}': updateTable(false),
    '/v1/{prefix}/namespaces/{namespace}/tables/{table}': updateTable(true),
    '/v1/transactions/commit': commitTransaction(false),
    '/v1/{prefix}/transactions/commit': commitTransaction(true)
  }
}
