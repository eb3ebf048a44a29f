import { ERRORS, GateError } from '../errors.js'
import { isObject } from '../iceberg/json-values.js'
import { namespaceLevels, namespaceName as nsName, namespaceSegment } from '../iceberg/rest-path.js'
import { badRequest, type CatalogContext, type CatalogRequest, json, noContent, type Reply, requireNamespace, stringMap } from './context.js'
import { paginate } from './paging.js'
import { checkNamespace } from './store.js'

/** Namespace routes (spec: listNamespaces, createNamespace, load/exists/drop, updateProperties). */

export function listNamespaces (ctx: CatalogContext, req: CatalogRequest): Reply {
  const state = ctx.store.state
  const rawParent = req.query.get('parent')
  // `parent` is form-decoded already; its levels are joined by the unit separator, like the path.
  const parent = rawParent === null || rawParent === '' ? [] : namespaceLevels(rawParent)
  if (parent.length > 0) requireNamespace(state, parent)
  const children = [...state.namespaces.values()]
    .filter(n => n.levels.length === parent.length + 1 && parent.every((level, i) => n.levels[i] === level))
    .map(n => n.levels)
  const { page, next } = paginate(children, namespaceSegment, req.query)
  return json({ namespaces: page, 'next-page-token': next ?? null })
}

export async function createNamespace (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid create namespace request: body must be an object')
  const levels = checkNamespace(body.namespace)
  const properties = stringMap(body.properties, 'namespace properties')
  await ctx.store.update(draft => {
    if (draft.namespaces.has(namespaceSegment(levels))) throw new GateError(ERRORS.ALREADY_EXISTS, `Namespace already exists: ${nsName(levels)}`)
    if (levels.length > 1 && !draft.namespaces.has(namespaceSegment(levels.slice(0, -1)))) {
      throw new GateError(ERRORS.NO_SUCH_NAMESPACE, `Cannot create namespace ${nsName(levels)}: parent namespace ${nsName(levels.slice(0, -1))} does not exist`)
    }
    draft.namespaces.set(namespaceSegment(levels), { levels, properties })
  })
  return json({ namespace: levels, properties })
}

export function loadNamespace (ctx: CatalogContext, req: CatalogRequest): Reply {
  const record = requireNamespace(ctx.store.state, req.namespace)
  return json({ namespace: record.levels, properties: record.properties })
}

export function namespaceExists (ctx: CatalogContext, req: CatalogRequest): Reply {
  requireNamespace(ctx.store.state, req.namespace)
  return noContent()
}

export async function dropNamespace (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const levels = req.namespace
  await ctx.store.update(draft => {
    requireNamespace(draft, levels)
    const key = namespaceSegment(levels)
    const tables = [...draft.tables.values()].filter(t => namespaceSegment(t.namespace) === key).length
    const views = [...draft.views.values()].filter(v => namespaceSegment(v.namespace) === key).length
    const children = [...draft.namespaces.values()].filter(n => n.levels.length > levels.length && namespaceSegment(n.levels.slice(0, levels.length)) === key).length
    if (tables + views + children > 0) {
      throw new GateError(ERRORS.NAMESPACE_NOT_EMPTY, `Namespace ${nsName(levels)} is not empty: it contains ${tables} table(s), ${views} view(s) and ${children} namespace(s)`)
    }
    draft.namespaces.delete(key)
  })
  return noContent()
}

export async function updateNamespaceProperties (ctx: CatalogContext, req: CatalogRequest): Promise<Reply> {
  const body = req.body()
  if (!isObject(body)) throw badRequest('Invalid update namespace properties request: body must be an object')
  const updates = stringMap(body.updates, 'updates')
  const removals = body.removals === undefined || body.removals === null ? [] : body.removals
  if (!Array.isArray(removals) || !removals.every((k): k is string => typeof k === 'string')) throw badRequest('Invalid removals: must be an array of strings')
  const both = removals.filter(key => Object.hasOwn(updates, key))
  if (both.length > 0) {
    throw new GateError(ERRORS.UNPROCESSABLE, `Cannot update and remove the same properties: ${both.join(', ')}`)
  }
  const levels = req.namespace
  return await ctx.store.update(draft => {
    const record = requireNamespace(draft, levels)
    const properties: Record<string, string> = Object.assign(Object.create(null), record.properties)
    const removed: string[] = []
    const missing: string[] = []
    for (const key of removals) {
      if (Object.hasOwn(properties, key)) {
        delete properties[key]
        removed.push(key)
      } else {
        missing.push(key)
      }
    }
    for (const key of Object.keys(updates)) properties[key] = updates[key] as string
    draft.namespaces.set(namespaceSegment(levels), { levels: record.levels, properties })
    return json({ updated: Object.keys(updates), removed, missing })
  })
}
