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
import { isAscii } from 'node:buffer'
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

/**
 * The text of `raw`, or undefined when it is not valid UTF-8 (a byte order mark is dropped).
 * `raw` may be the pieces a body arrived in: they are decoded one by one, never joined into one
 * buffer first.
 */
export function decodeUtf8 (raw: Buffer | readonly Buffer[]): string | undefined {
  try {
    if (!Array.isArray(raw)) return utf8.decode(raw as Buffer)
    const chunks = raw as readonly Buffer[]
    return chunks.length === 1 ? utf8.decode(chunks[0] as Buffer) : decodePieces(chunks)
  } catch {
    return undefined
  }
}

/**
 * Decodes the pieces of one text in order; throws when they are not valid UTF-8. A piece that is
 * all ASCII, with no sequence of the piece before it left open, is its own text (read as
 * Latin-1, the cheapest copy V8 has, and as fast as decoding the joined buffer once); the
 * others go through one streaming decoder, which carries a sequence split between pieces over.
 */
function decodePieces (chunks: readonly Buffer[]): string {
  const parts: string[] = []
  let decoder: InstanceType<typeof TextDecoder> | undefined
  /** The decoder may hold the start of a sequence the next piece completes. */
  let open = false
  for (const chunk of chunks) {
    if (chunk.length === 0) continue
    if (!open && isAscii(chunk)) {
      parts.push(chunk.toString('latin1'))
      continue
    }
    // A byte order mark is only dropped at the very start of the text.
    decoder ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: parts.length > 0 })
    parts.push(decoder.decode(chunk, { stream: true }))
    open = endsOpen(chunk)
  }
  if (decoder !== undefined) parts.push(decoder.decode())
  return parts.length === 1 ? parts[0] as string : parts.join('')
}

/**
 * Whether `chunk` may end inside a UTF-8 sequence (its last lead byte wants more bytes than
 * follow it). A short piece, which may itself continue the piece before, counts as open.
 */
function endsOpen (chunk: Buffer): boolean {
  const n = chunk.length
  if (n < 4) return true
  for (let i = n - 1; i >= n - 4; i--) {
    const b = chunk[i] as number
    if (b < 0x80) return false
    if (b >= 0xc0) return n - i < (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2)
  }
  return false
}

function read (raw: Buffer, what: string, opts: Parameters<typeof readJson>[1]): ParsedBody {
  const text = decodeUtf8(raw)
  if (text === undefined) return { ok: false, message: `Cannot read ${what}: it is not valid UTF-8` }
  const result = readJson(text, opts)
  return result.ok ? result : { ok: false, message: `Cannot read ${what}: ${result.problem}` }
}
