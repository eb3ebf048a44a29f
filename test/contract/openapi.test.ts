import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import t from 'tap'
import { parse as parseYaml } from 'yaml'
import { ALL_RULES, ruleCatalogue, ruleDoc } from '../../src/engine/rules/index.js'
import { rulePage } from '../../src/engine/rules/rule-page.js'
import { generateOpenApi, OPENAPI_JSON, OPENAPI_YAML } from '../../scripts/gen-openapi.js'
import { startProxy } from '../helpers/index.js'

const committedJson = readFileSync(OPENAPI_JSON, 'utf8')
const committedYaml = readFileSync(OPENAPI_YAML, 'utf8')
const doc = JSON.parse(committedJson)

t.test('the committed document is what the server serves (run npm run openapi:generate after changing a route)', async (t) => {
  const generated = await generateOpenApi()
  t.equal(generated.json, committedJson, 'openapi/iceguard.openapi.json is up to date')
  t.equal(generated.yaml, committedYaml, 'openapi/iceguard.openapi.yaml is up to date')
  const proxy = await startProxy(t, { upstream: 'http://127.0.0.1:9' })
  const json = await fetch(`${proxy.url}/openapi.json`)
  t.match(json.headers.get('content-type'), /^application\/json/)
  t.same(await json.json(), doc, '/openapi.json serves the committed document')
  const yaml = await fetch(`${proxy.url}/openapi.yaml`)
  t.match(yaml.headers.get('content-type'), /^application\/yaml/)
  t.same(parseYaml(await yaml.text()), doc, '/openapi.yaml is the same document')
})

t.test('the document is valid OpenAPI 3.1', async (t) => {
  t.equal(doc.openapi, '3.1.0')
  const validator = new Validator()
  const result = await validator.validate(structuredClone(doc))
  t.same(result.errors ?? [], [], 'no schema errors')
  t.equal(result.valid, true)
  t.equal(validator.version, '3.1')
})

t.test('every admin and operations route is described completely', async (t) => {
  const expected: Array<[string, string, string]> = [
    ['post', '/admin/v1/validate', 'validateCommit'],
    ['post', '/admin/v1/diff', 'diffSchemas'],
    ['get', '/admin/v1/namespaces/{namespace}/tables/{table}/schemas', 'getSchemaHistory'],
    ['get', '/admin/v1/namespaces/{namespace}/tables/{table}/contract', 'getTableContract'],
    ['get', '/admin/v1/rules', 'listRules'],
    ['get', '/admin/v1/policy/effective', 'getEffectivePolicy'],
    ['post', '/admin/v1/policy/reload', 'reloadPolicy'],
    ['get', '/healthz', 'healthz'],
    ['get', '/readyz', 'readyz'],
    ['get', '/metrics', 'metrics']
  ]
  const documented = Object.entries(doc.paths).filter(([path]) => !path.startsWith('/v1/'))
    .flatMap(([path, item]) => Object.keys(item as object).map(method => [method, path] as const))
  for (const [method, path, operationId] of expected) {
    t.equal(doc.paths[path]?.[method]?.operationId, operationId, `${method} ${path} is documented as ${operationId}`)
  }
  t.notOk(documented.some(([, path]) => /^\/(docs|openapi)/.test(path)), 'the document does not describe itself or the UI')
  const ids = new Set<string>()
  for (const [method, path] of documented) {
    const op = doc.paths[path][method]
    t.ok(op.operationId, `${method} ${path}: operationId`)
    t.ok(op.summary, `${method} ${path}: summary`)
    t.ok(Object.keys(op.responses).some(s => s.startsWith('2')), `${method} ${path}: success described`)
    ids.add(op.operationId)
    if (path.startsWith('/admin/') && path !== '/admin/v1/rules') {
      const errors = Object.keys(op.responses).filter(s => !s.startsWith('2'))
      t.ok(errors.length > 0, `${method} ${path}: errors described`)
      for (const status of errors) {
        t.same(op.responses[status].content['application/json'].schema, { $ref: '#/components/schemas/IcebergErrorResponse' }, `${method} ${path} ${status}: ErrorModel`)
      }
    }
    if (method === 'post' && path.startsWith('/admin/') && op.requestBody !== undefined) {
      t.match(op.requestBody.content['application/json'].schema.$ref, /^#\/components\/schemas\//, `${method} ${path}: body is a named component`)
    }
  }
  t.equal(ids.size, documented.length, 'operationIds are unique')
  t.same(doc.paths['/admin/v1/policy/reload'].post.security, [{ adminToken: [] }, { adminJwt: [] }, { adminTokenHeader: [] }])
  t.match(doc.paths['/admin/v1/policy/reload'].post.description, /Access: write\. Refused while no admin authentication is configured/)
  t.match(doc.paths['/admin/v1/rules'].get.description, /Access: read\./)
  t.match(doc.paths['/admin/v1/validate'].post.description, /Access: read\./, 'a dry run needs only read')
  t.match(doc.components.securitySchemes.adminJwt, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  t.match(doc.components.securitySchemes.adminTokenHeader, { type: 'apiKey', in: 'header', name: 'X-Iceguard-Admin-Token' })
  for (const name of ['ValidateRequest', 'ValidateResponse', 'Finding', 'SchemaChange', 'DiffRequest', 'DiffResponse', 'SchemaHistory', 'FieldLineage', 'ContractReport', 'RuleCatalogue', 'EffectivePolicy', 'ErrorModel', 'IcebergErrorResponse']) {
    t.ok(doc.components.schemas[name], `component ${name}`)
  }
  t.notOk(Object.keys(doc.components.schemas).some(k => k.startsWith('def-')), 'every component has a name')
})

t.test('the gated Iceberg routes, with and without {prefix}, and their answers', async (t) => {
  for (const [path, operationId, ok] of [
    ['/v1/namespaces/{namespace}/tables/{table}', 'updateTable', '200'],
    ['/v1/{prefix}/namespaces/{namespace}/tables/{table}', 'updateTableWithPrefix', '200'],
    ['/v1/transactions/commit', 'commitTransaction', '204'],
    ['/v1/{prefix}/transactions/commit', 'commitTransactionWithPrefix', '204'],
    ['/v1/namespaces/{namespace}/tables', 'createTable', '200'],
    ['/v1/{prefix}/namespaces/{namespace}/tables', 'createTableWithPrefix', '200']
  ] as const) {
    const op = doc.paths[path]?.post
    t.equal(op?.operationId, operationId, path)
    for (const status of [ok, '400', '409', '502', '503', '504']) t.ok(op.responses[status], `${operationId} ${status}`)
    t.ok(op.responses['503'].headers['Retry-After'], `${operationId}: 503 carries Retry-After`)
    t.same(op.responses['400'].content['application/json'].schema, { $ref: '#/components/schemas/IcebergErrorResponse' })
  }
  t.same(doc.components.schemas.ErrorModel.required.sort(), ['code', 'message', 'type'])
})

t.test('rule ids: registry, OpenAPI enum and docs/rules.md agree', async (t) => {
  const ids = ruleCatalogue().map(r => r.id)
  for (const rule of ALL_RULES) t.ok(ids.includes(rule.id), `the catalogue lists rule file ${rule.id}`)
  t.same([...doc.components.schemas.RuleId.enum].sort(), [...ids].sort(), 'the OpenAPI enum lists every rule, and only rules')
  const docs = readFileSync(new URL('../../docs/rules.md', import.meta.url), 'utf8')
  for (const id of ids) {
    t.equal(ruleDoc(id), `/rules/${id}`, `${id} links to the page iceguard serves`)
    t.match(rulePage(id), new RegExp(`<h1><code>${id}</code></h1>[\\s\\S]*<strong>Why\\.</strong>`), `docs/rules.md has a section for ${id}, rendered as its page`)
  }
  const documented = [...docs.matchAll(/^#{2,4}\s+`?([A-Z][A-Z0-9_]+)`?\s*$/gm)].map(m => m[1] as string)
  for (const id of documented) t.ok(ids.includes(id), `docs/rules.md documents ${id}, which is a rule`)
})
