/**
 * Reads a gated request body (and, less strictly, an upstream answer) into a JSON tree.
 *
 * Numbers the native parser would change keep their exact text as `LosslessNumber`: integers past
 * 2^53 (64-bit snapshot ids) and, in a request body, every number with a fraction or exponent
 * (`1.0` stays `1.0`, which an int default may not be). Before the tree is built one flat pass
 * bounds the nesting depth (the parser recurses; a schema nested thousands deep must be a 400, not a
 * stack overflow) and, in a request body, rejects duplicate keys (the upstream's parser may keep the
 * other copy than the one validated) and `__proto__` / `constructor.prototype` keys (`read-json.ts`).
 * The tree is only read: a body the gate changes is spliced as text (`splice-requirements.ts`).
 */
import { LosslessNumber, parse } from 'lossless-json'
import { readJson } from './read-json.js'
import { DEFAULT_MAX_DEPTH } from './scan.js'

export { DEFAULT_MAX_DEPTH }

export type ParsedBody =
  | { readonly ok: true, readonly value: unknown }
  | { readonly ok: false, readonly message: string }

const utf8 = new TextDecoder('utf-8', { fatal: true })

const losslessParse = (text: string): unknown => parse(text, null, (s: string) => new LosslessNumber(s))

/**
 * Parses `raw` as JSON without losing numbers. Returns a message that stands alone when the body
 * is not acceptable.
 */
export function parseCommitBody (raw: Buffer, maxDepth = DEFAULT_MAX_DEPTH): ParsedBody {
  return read(raw, 'request body', { maxDepth, strict: true, keepFractions: true, slow: losslessParse })
}

/**
 * A reader for an upstream answer (loadTable): depth still bounded, but keys are the upstream's
 * business (a duplicate there is not the caller's fault), and only integers past 2^53 are kept as
 * `LosslessNumber`: the answer is only read, and the rules read other numbers by value.
 */
export function parseUpstreamBody (raw: Buffer, maxDepth = 4 * DEFAULT_MAX_DEPTH): ParsedBody {
  return read(raw, 'upstream answer', { maxDepth, slow: losslessParse })
}

/** The text of `raw`, or undefined when it is not valid UTF-8 (a byte order mark is dropped). */
export function decodeUtf8 (raw: Buffer): string | undefined {
  try {
    return utf8.decode(raw)
  } catch {
    return undefined
  }
}

function read (raw: Buffer, what: string, opts: Parameters<typeof readJson>[1]): ParsedBody {
  const text = decodeUtf8(raw)
  if (text === undefined) return { ok: false, message: `Cannot read ${what}: it is not valid UTF-8` }
  const result = readJson(text, opts)
  return result.ok ? result : { ok: false, message: `Cannot read ${what}: ${result.problem}` }
}
