/**
 * Reads a gated request body into a lossless JSON tree.
 *
 * Every number stays a `LosslessNumber` holding the exact text it arrived as, so a body the gate
 * must rewrite (injected requirements) is written back with every digit of a 64-bit snapshot id
 * and every `1.0` still a `1.0`. Before the tree is built a flat scan bounds the nesting depth
 * (the parser recurses; a schema nested thousands deep must be a 400, not a stack overflow),
 * rejects duplicate keys (the upstream's parser may keep the other copy than the one validated)
 * and `__proto__` / `constructor.prototype` keys.
 */
import { LosslessNumber, parse } from 'lossless-json'
import { parseKeepingLongs } from './parse-upstream-json.js'

/** Deepest nesting of objects and arrays a commit body may have. A real schema needs far fewer. */
export const DEFAULT_MAX_DEPTH = 256

export type ParsedBody =
  | { readonly ok: true, readonly value: unknown }
  | { readonly ok: false, readonly message: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

interface Frame {
  readonly object: boolean
  readonly key: string | undefined
  readonly keys: Set<string> | undefined
  expectKey: boolean
}

/**
 * Parses `raw` as JSON without losing numbers. Returns a message that stands alone when the body
 * is not acceptable.
 */
export function parseCommitBody (raw: Buffer, maxDepth = DEFAULT_MAX_DEPTH): ParsedBody {
  return parseLossless(raw, { maxDepth, strict: true, what: 'request body' })
}

/**
 * A reader for an upstream answer (loadTable): depth still bounded, but keys are the upstream's
 * business (a duplicate there is not the caller's fault). The answer is only read, never written
 * back, so it is parsed natively with only integers past 2^53 kept as `LosslessNumber`
 * (`parse-upstream-json.ts`): several times faster than the lossless parser on a base.
 */
export function parseUpstreamBody (raw: Buffer, maxDepth = 4 * DEFAULT_MAX_DEPTH): ParsedBody {
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    return { ok: false, message: 'Cannot read upstream answer: it is not valid UTF-8' }
  }
  const read = parseKeepingLongs(text, maxDepth, (t) => parse(t, null, (s: string) => new LosslessNumber(s)))
  return read.ok ? read : { ok: false, message: `Cannot read upstream answer: ${read.problem}` }
}

function parseLossless (raw: Buffer, opts: { maxDepth: number, strict: boolean, what: string }): ParsedBody {
  let text: string
  try {
    text = utf8.decode(raw)
  } catch {
    return { ok: false, message: `Cannot read ${opts.what}: it is not valid UTF-8` }
  }
  const problem = scanStructure(text, opts.maxDepth, opts.strict)
  if (problem !== undefined) return { ok: false, message: `Cannot read ${opts.what}: ${problem}` }
  try {
    return { ok: true, value: parse(text, null, (s: string) => new LosslessNumber(s)) }
  } catch (err) {
    return { ok: false, message: `Cannot read ${opts.what}: invalid JSON: ${(err as Error).message}` }
  }
}

/** A flat pass over the text: depth, duplicate keys and prototype keys. Grammar is left to the parser. */
function scanStructure (text: string, maxDepth: number, strict: boolean): string | undefined {
  const stack: Frame[] = []
  let pendingKey: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) { // "
      const start = i
      let escaped = false
      i++
      while (i < text.length && text.charCodeAt(i) !== 0x22) {
        if (text.charCodeAt(i) === 0x5c) { escaped = true; i++ }
        i++
      }
      const top = stack[stack.length - 1]
      if (strict && top?.object === true && top.expectKey) {
        const key = escaped ? decodeKey(text.slice(start, i + 1)) : text.slice(start + 1, i)
        if (key === undefined) return undefined // the parser reports the bad escape
        if (key === '__proto__') return 'the key "__proto__" is not allowed'
        if (key === 'prototype' && top.key === 'constructor') return 'the key "constructor.prototype" is not allowed'
        if (top.keys!.has(key)) return `duplicate key "${printable(key)}" in one object`
        top.keys!.add(key)
        top.expectKey = false
        pendingKey = key
      }
    } else if (c === 0x7b || c === 0x5b) { // { [
      if (stack.length >= maxDepth) return `nesting deeper than ${maxDepth} levels`
      const object = c === 0x7b
      stack.push({ object, key: pendingKey, keys: object ? new Set() : undefined, expectKey: object })
      pendingKey = undefined
    } else if (c === 0x7d || c === 0x5d) { // } ]
      stack.pop()
      pendingKey = undefined
    } else if (c === 0x2c) { // ,
      const top = stack[stack.length - 1]
      if (top?.object === true) top.expectKey = true
      pendingKey = undefined
    }
  }
  return undefined
}

function decodeKey (token: string): string | undefined {
  try {
    return JSON.parse(token) as string
  } catch {
    return undefined
  }
}

function printable (key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key
}

export function isJsonObject (value: unknown): value is Record<string, unknown> {
  // A LosslessNumber is an object in JS but a number in JSON (a body of `42` is no commit).
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof LosslessNumber)
}
