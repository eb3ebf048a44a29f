/**
 * Loaded before anything else in every test process (`node-arg` in package.json's tap config).
 *
 * A running iceguard builds one Fastify app, and Fastify compiles each route's response schemas
 * with fast-json-stringify when the app becomes ready. A test process builds an app per
 * `startProxy`, often dozens of them, and compiling the same schemas again and again was more than
 * half of an integration suite's CPU time (test/integration/policy-e2e.test.ts on one transport:
 * 22 s of CPU without this, 10 s with it). This makes a test process compile each schema once,
 * like a running iceguard: fast-json-stringify's `build` is replaced, in Node's module cache before
 * Fastify loads it, by one that remembers what it built for the same schema and options (compared
 * by their JSON text). The serializer a route gets is the function fast-json-stringify built for
 * that very schema; nothing else in Fastify or iceguard changes.
 */
import { createRequire } from 'node:module'
import { dirname } from 'node:path'

type Build = (schema: unknown, options?: unknown) => unknown

const require = createRequire(import.meta.url)
// The copy Fastify's serializer compiler requires (node_modules/@fastify/fast-json-stringify-compiler).
const fastify = dirname(require.resolve('fastify/package.json'))
const compiler = require.resolve('@fastify/fast-json-stringify-compiler', { paths: [fastify] })
const path = require.resolve('fast-json-stringify', { paths: [dirname(compiler)] })
const build = require(path) as Build & Record<string, unknown>

/** JSON text, or undefined for anything JSON cannot write (a function, say): then no comparison. */
function jsonOf (value: unknown): string | undefined {
  let comparable = true
  try {
    const text = JSON.stringify(value, (_k, v: unknown) => {
      if (typeof v === 'function' || typeof v === 'symbol') comparable = false
      return v
    })
    return comparable ? text : undefined
  } catch {
    return undefined
  }
}

/**
 * The text of a schema object, written once per object: the route schemas and the shared schemas
 * are the same objects in every app a process builds, and writing the shared ones out for every
 * route cost as much as compiling.
 */
const texts = new WeakMap<object, string | undefined>()
function textOf (schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return jsonOf(schema)
  if (!texts.has(schema)) texts.set(schema, jsonOf(schema))
  return texts.get(schema)
}

/** fast-json-stringify's options: its settings, and `schema`, the shared schemas by id. */
function keyOf (schema: unknown, options: unknown): string | undefined {
  const { schema: shared = {}, ...settings } = (options ?? {}) as { schema?: Record<string, unknown> }
  const parts = [textOf(schema), jsonOf(settings)]
  for (const id of Object.keys(shared).sort()) parts.push(JSON.stringify(id), textOf(shared[id]))
  return parts.includes(undefined) ? undefined : parts.join('\n')
}

const built = new Map<string, unknown>()
function remembered (schema: unknown, options?: unknown): unknown {
  const key = keyOf(schema, options)
  if (key === undefined) return build(schema, options)
  if (!built.has(key)) built.set(key, build(schema, options))
  return built.get(key)
}
Object.assign(remembered, build, { default: remembered, build: remembered })
require.cache[path]!.exports = remembered
