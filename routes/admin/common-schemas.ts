/** Route-level pieces shared by the admin endpoints: path parameters and error responses. */
import { Type } from '@sinclair/typebox'
import { IcebergErrorResponseSchema } from '../../src/schemas/error-model.js'
import { ref } from '../../src/schemas/ref.js'

export const TablePathParams = Type.Object({
  namespace: Type.String({ description: 'Namespace levels joined by the unit separator `%1F` (as in the Iceberg REST spec), or by dots.' }),
  table: Type.String()
})

export const PrefixQuery = Type.Object({
  prefix: Type.Optional(Type.String({ description: 'The catalog `{prefix}` path segment, when the upstream uses one.' }))
}, { additionalProperties: false })

const error = (description: string) => ref(IcebergErrorResponseSchema, { description })

export const BAD_INPUT = { 400: error('Bad input: the message names the field.') }

/** Answers of endpoints that read a table from the upstream as the caller. */
export const TABLE_READ_ERRORS = {
  400: error('Bad input: the message names the field.'),
  401: error('The upstream catalog refused the caller\'s credentials (relayed).'),
  403: error('The upstream catalog refused the caller access to the table (relayed).'),
  404: error('The table (or namespace) does not exist (relayed from the upstream).'),
  502: error('The upstream catalog answered with something that is not table metadata.'),
  503: error('The upstream catalog could not be reached; retry after `Retry-After` seconds.'),
  504: error('The upstream catalog did not answer in time.')
}
