/**
 * The Iceberg REST error body (spec `IcebergErrorResponse` / `ErrorModel`), the only error shape
 * iceguard answers with, on the Iceberg routes and the admin API alike.
 */
import { Type, type Static } from '@sinclair/typebox'
import { ref } from './ref.js'

export const ErrorModelSchema = Type.Object({
  message: Type.String({ description: 'Human-readable error message; stands alone (pyiceberg shows only type and message).' }),
  type: Type.String({ description: 'Internal type definition of the error.', examples: ['BadRequestException'] }),
  code: Type.Integer({ minimum: 400, maximum: 600, description: 'HTTP response code; always equal to the status of the response.', examples: [400] }),
  stack: Type.Optional(Type.Array(Type.String(), { description: 'One line per finding or detail.' }))
}, { $id: 'ErrorModel', description: 'JSON error payload returned in a response with further details on the error' })

export const IcebergErrorResponseSchema = Type.Object({
  error: ref(ErrorModelSchema)
}, { $id: 'IcebergErrorResponse', additionalProperties: false, description: 'JSON wrapper for all error responses (non-2xx)' })

export type ErrorModel = Static<typeof ErrorModelSchema>
export type IcebergErrorResponse = Static<typeof IcebergErrorResponseSchema>
