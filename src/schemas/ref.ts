import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'

/**
 * A `$ref` to a shared schema by its `$id`, typed as the schema it points to. Shared schemas are
 * added to Fastify once (`addSchema`), so ajv resolves the reference and @fastify/swagger emits a
 * named component instead of an inlined copy.
 */
export function ref<T extends TSchema> (schema: T, options: Record<string, unknown> = {}): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new Error('Cannot reference a schema without $id')
  return Type.Unsafe<Static<T>>({ ...options, $ref: schema.$id })
}
