/**
 * The layers of iceguard and the one direction imports may point (docs/architecture.md):
 *
 *   model  src/iceberg, src/contract
 *     ← engine  src/engine/diff, src/engine/rules
 *     ← policy  src/policy
 *     ← gate    src/gate
 *     ← edge    src/edge, src/plugins, routes/, wired by src/main
 *   src/json (bytes ↔ model) and src/upstream (bytes to the catalog) sit below the gate;
 *   the embedded catalog (src/dev-catalog) → model and json only; what views read (src/lineage) → model only.
 *
 * Run by `npm run lint`. Type-only imports count: a cycle of types is still a cycle to a reader.
 */
const ours = '^(src|routes)/'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module never reaches itself through its imports.',
      from: {},
      to: { circular: true }
    },
    {
      name: 'model-is-a-leaf',
      severity: 'error',
      comment: 'The Iceberg model imports nothing of ours outside itself (iceberg-rust spec/).',
      from: { path: '^src/iceberg/' },
      to: { path: ours, pathNot: '^src/iceberg/' }
    },
    {
      name: 'contract-on-model',
      severity: 'error',
      comment: 'Schema contracts are a leaf of the model: rules, policy and evolve read them.',
      from: { path: '^src/contract/' },
      to: { path: ours, pathNot: '^src/(contract|iceberg)/' }
    },
    {
      name: 'engine-below-policy',
      severity: 'error',
      comment: 'Diff and rules judge schemas: they import the model, never the policy, the gate or the edge.',
      from: { path: '^src/engine/' },
      to: { path: ours, pathNot: '^src/(engine|iceberg|contract)/' }
    },
    {
      name: 'policy-below-gate',
      severity: 'error',
      comment: 'The policy resolves settings for the engine; it knows nothing of the gate or HTTP.',
      from: { path: '^src/policy/' },
      to: { path: ours, pathNot: '^src/(policy|engine|iceberg|contract)/' }
    },
    {
      name: 'gate-below-edge',
      severity: 'error',
      comment: 'The gate decides and enforces; transports, routes and plugins call it, never the reverse.',
      from: { path: '^src/gate/' },
      to: { path: '^(routes/|src/(edge|plugins|dev-catalog|cli|evolve|schemas|main)/)' }
    },
    {
      name: 'decision-without-transport',
      severity: 'error',
      comment: 'The decision half of the gate is pure: no Fastify, no node:http, no undici.',
      from: { path: '^src/(engine/|gate/(judge-write|gate-answers|inject-requirements)\\.ts$)' },
      to: { path: '(^|/)node_modules/(fastify|undici|@fastify)/|^(http|https|net|node:http|node:https|node:net)$' }
    },
    {
      name: 'lineage-on-model',
      comment: 'What a view reads is worked out from SQL text and the model alone: no store, no gate, no HTTP.',
      severity: 'error',
      from: { path: '^src/lineage/' },
      to: { path: ours, pathNot: '^src/(lineage|iceberg)/' }
    },
    {
      name: 'json-on-model',
      severity: 'error',
      comment: 'The hand-written JSON readers and splicer turn bytes into the model and back; they know nothing of the gate.',
      from: { path: '^src/json/' },
      to: { path: ours, pathNot: '^src/(json|iceberg)/|^src/errors\\.ts$' }
    },
    {
      name: 'upstream-below-gate',
      severity: 'error',
      comment: 'Outbound bytes: the exchange with the catalog knows no decision, no transport of ours and no route.',
      from: { path: '^src/upstream/' },
      to: { path: '^(routes/|src/(edge|gate|engine|policy|plugins|dev-catalog|cli|evolve)/)' }
    },
    {
      name: 'edge-below-wiring',
      severity: 'error',
      comment: 'Inbound bytes: the transports call the gate and the upstream; only the process wiring calls them.',
      from: { path: '^src/edge/' },
      to: { path: '^(routes/|src/(plugins|dev-catalog|cli)/)' }
    },
    {
      name: 'catalog-on-model',
      severity: 'error',
      comment: 'The embedded catalog applies commits through the model; it keeps storage, locking and routes.',
      from: { path: '^src/dev-catalog/' },
      to: { path: ours, pathNot: '^src/(dev-catalog|iceberg|json)/|^src/errors\\.ts$' }
    },
    {
      name: 'errors-are-a-leaf',
      severity: 'error',
      comment: 'The error catalogue is read by every layer, so it imports only the wire shape of the error body.',
      from: { path: '^src/errors\\.ts$' },
      to: { path: ours, pathNot: '^src/schemas/(error-model|ref)\\.ts$' }
    },
    {
      name: 'src-below-routes',
      severity: 'error',
      comment: 'Routes are the outermost edge: only the app wires them.',
      from: { path: '^src/', pathNot: '^src/main/app\\.ts$' },
      to: { path: '^routes/' }
    },
    {
      name: 'route-families-apart',
      severity: 'error',
      comment: 'Route files never import each other across families; shared edge helpers live in routes/*.ts.',
      from: { path: '^routes/(admin|iceberg)/' },
      to: { path: '^routes/(admin|iceberg)/', pathNot: '^routes/$1/' }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' }
  }
}
