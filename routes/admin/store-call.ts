/** Admin calls on the decision store: a store that cannot be reached is a 503 with Retry-After. */
import { ERRORS, GateError } from '../../src/errors.js'
import { IcebergErrorResponseSchema } from '../../src/schemas/error-model.js'
import { ref } from '../../src/schemas/ref.js'
import { describe } from '../../src/decisions/decision-log.js'

export const STORE_ERRORS = {
  503: ref(IcebergErrorResponseSchema, { description: 'The decision store could not be reached; retry after `Retry-After` seconds.' })
}

export async function storeCall<T> (fn: () => Promise<T>, action: string): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (err instanceof GateError) throw err
    throw new GateError(ERRORS.STORE_UNAVAILABLE, `Cannot ${action}: the decision store is unavailable (${describe(err)})`,
      { headers: { 'retry-after': '5' }, cause: err })
  }
}
