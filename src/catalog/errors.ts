/**
 * Catalog errors in the Iceberg ErrorModel shape. `type` is the Java exception name clients map
 * to their own exceptions (spec `IcebergErrorResponse`; reference server `RESTCatalogAdapter`).
 */
export class CatalogError extends Error {
  readonly status: number
  readonly type: string
  readonly headers: Record<string, string>

  constructor (status: number, type: string, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.status = status
    this.type = type
    this.headers = headers
  }

  toBody (): { error: { message: string, type: string, code: number } } {
    return { error: { message: this.message, type: this.type, code: this.status } }
  }
}

export const badRequest = (message: string): CatalogError => new CatalogError(400, 'BadRequestException', message)
export const validationFailed = (message: string): CatalogError => new CatalogError(400, 'ValidationException', message)
export const notFound = (message: string): CatalogError => new CatalogError(404, 'NotFoundException', message)
export const noSuchNamespace = (message: string): CatalogError => new CatalogError(404, 'NoSuchNamespaceException', message)
export const noSuchTable = (message: string): CatalogError => new CatalogError(404, 'NoSuchTableException', message)
export const noSuchView = (message: string): CatalogError => new CatalogError(404, 'NoSuchViewException', message)
export const alreadyExists = (message: string): CatalogError => new CatalogError(409, 'AlreadyExistsException', message)
export const namespaceNotEmpty = (message: string): CatalogError => new CatalogError(409, 'NamespaceNotEmptyException', message)
export const commitFailed = (message: string): CatalogError => new CatalogError(409, 'CommitFailedException', message)
export const unsupported = (message: string): CatalogError => new CatalogError(406, 'UnsupportedOperationException', message)
