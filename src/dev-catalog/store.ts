import { randomUUID } from 'node:crypto'
import { mkdir, open, readFile, rename, rm, rmdir, unlink } from 'node:fs/promises'
import path from 'node:path'
import { ERRORS, GateError } from '../errors.js'
import { parseJsonText } from '../iceberg/json-text.js'
import { isObject, own, readStringMap } from '../iceberg/json-values.js'
import { namespaceSegment, type TableRef } from '../iceberg/rest-path.js'
import { parseWholeTableMetadata, tableMetadataChunks } from '../iceberg/table-metadata.js'
import type { ViewMetadata, WholeTableMetadata } from '../iceberg/types.js'
import { parseViewMetadata, viewMetadataChunks } from '../iceberg/view-metadata.js'
import { KeyedLock } from './lock.js'

/**
 * Persistence of the embedded catalog. Two things are stored:
 * - table and view metadata files, written once and never changed, as the spec lays them out
 *   (`<table location>/metadata/<NNNNN>-<uuid>.metadata.json`);
 * - a small state file (namespaces with their properties, table or view → current metadata location),
 *   replaced atomically (temp file, fsync, rename), so a commit becomes visible all at once or
 *   not at all, for one table or for a whole transaction.
 * With `memory: true` both live in memory only: a metadata "file" is then the metadata value itself,
 * and versions of a table share every schema, snapshot and log entry they have in common.
 */

export interface NamespaceRecord { readonly levels: readonly string[], readonly properties: Readonly<Record<string, string>> }
export interface TableRecord extends Pick<TableRef, 'namespace' | 'name'> { readonly metadataLocation: string }
/** A view has the same record as a table: its identifier and its current view metadata file. */
export type ViewRecord = TableRecord
export interface CatalogState {
  readonly namespaces: Map<string, NamespaceRecord>
  readonly tables: Map<string, TableRecord>
  /** Keyed like `tables` (`tableKey`); an identifier is a table or a view, never both. */
  readonly views: Map<string, ViewRecord>
}

type Stored =
  | { readonly kind: 'table', readonly metadata: WholeTableMetadata }
  | { readonly kind: 'view', readonly metadata: ViewMetadata }

const STATE_FILE = '.iceguard-catalog.json'
/** Parsed metadata (disk mode) and written texts kept for reuse: bounded by count and by text size. */
const CACHE_MAX = 512
const CACHE_MAX_CHARS = 32 * 1024 * 1024
const VERSION = /^(\d+)-.*\.metadata\.json$/

interface StoreOptions { root: string, memory: boolean }

/**
 * Names become folder names in the warehouse, so a name must never be able to leave its folder:
 * no separators, no `..`, no NUL or other control characters, and no leading dot (dot names are
 * the warehouse's own files, such as the catalog state file).
 */
export function checkName (kind: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw new GateError(ERRORS.BAD_REQUEST, `Invalid ${kind} name: must be a non-empty string`)
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f\u007f]/.test(name) || name.includes('..') || name.startsWith('.')) {
    throw new GateError(ERRORS.BAD_REQUEST, `Invalid ${kind} name: ${JSON.stringify(name)}: must not contain '/', '\\', '..', control characters, or start with '.'`)
  }
  if (Buffer.byteLength(name) > 255) throw new GateError(ERRORS.BAD_REQUEST, `Invalid ${kind} name: longer than 255 bytes`)
  return name
}

export function checkNamespace (levels: unknown): string[] {
  if (!Array.isArray(levels) || levels.length === 0) throw new GateError(ERRORS.BAD_REQUEST, 'Invalid namespace: must be a non-empty array of strings')
  return levels.map(level => checkName('namespace', level))
}

// NUL cannot occur in a checked name, so it separates namespace and name unambiguously.
export const tableKey = (ns: readonly string[], name: string): string => `${namespaceSegment(ns)}\u0000${name}`

/** A map used as a least-recently-used cache bounded by entry count and by the text size of its entries. */
class SizedCache<V> {
  readonly #entries = new Map<string, { value: V, chars: number }>()
  #chars = 0

  get (key: string): V | undefined {
    const hit = this.#entries.get(key)
    if (hit === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, hit)
    return hit.value
  }

  set (key: string, value: V, chars: number): void {
    this.delete(key)
    this.#entries.set(key, { value, chars })
    this.#chars += chars
    // Least recently used first out; the newest entry always stays, however large.
    while (this.#entries.size > 1 && (this.#entries.size > CACHE_MAX || this.#chars > CACHE_MAX_CHARS)) {
      this.delete(this.#entries.keys().next().value as string)
    }
  }

  delete (key: string): void {
    const hit = this.#entries.get(key)
    if (hit === undefined) return
    this.#entries.delete(key)
    this.#chars -= hit.chars
  }
}

export class CatalogStore {
  readonly memory: boolean
  /** Absolute warehouse folder; every file the catalog writes or deletes lies inside it. */
  readonly root: string
  readonly rootUri: string
  #state: CatalogState = { namespaces: new Map(), tables: new Map(), views: new Map() }
  readonly #stateLock = new KeyedLock()
  /** Memory mode: the metadata "files". */
  readonly #files = new Map<string, Stored>()
  /** Disk mode: parsed metadata files. */
  readonly #parsed = new SizedCache<Stored>()
  /** Metadata files recently written or answered, as UTF-8 chunks, by location. */
  readonly #texts = new SizedCache<readonly Buffer[]>()

  private constructor (opts: StoreOptions) {
    this.memory = opts.memory
    this.root = path.resolve(opts.root)
    this.rootUri = `file://${this.root}`
  }

  static async open (opts: StoreOptions): Promise<CatalogStore> {
    const store = new CatalogStore(opts)
    if (!store.memory) {
      await mkdir(store.root, { recursive: true })
      await store.#loadState()
    }
    return store
  }

  get state (): CatalogState {
    return this.#state
  }

  /**
   * Runs `mutate` on a copy of the state and makes the copy current once it is saved. Mutations
   * run one at a time, so checks inside `mutate` (namespace exists, table absent) hold when saved.
   */
  async update<T> (mutate: (draft: CatalogState) => T): Promise<T> {
    return await this.#stateLock.run(['state'], async () => {
      const draft: CatalogState = {
        namespaces: new Map(this.#state.namespaces),
        tables: new Map(this.#state.tables),
        views: new Map(this.#state.views)
      }
      const result = mutate(draft)
      if (!this.memory) await this.#saveState(draft)
      this.#state = draft
      return result
    })
  }

  /** Local file path of a `file:` URI or absolute path; undefined for other schemes. */
  localPath (location: string): string | undefined {
    let p: string
    if (location.startsWith('file://')) p = location.slice('file://'.length)
    else if (location.startsWith('file:')) p = location.slice('file:'.length)
    else if (location.startsWith('/')) p = location
    else return undefined
    return path.isAbsolute(p) ? path.resolve(p) : undefined
  }

  inside (p: string | undefined): p is string {
    return p !== undefined && p.startsWith(this.root + path.sep)
  }

  defaultTableLocation (ns: readonly string[], name: string): string {
    return `${this.rootUri}/${[...ns, name].join('/')}`
  }

  /**
   * Where the next metadata file of a table or view goes: `<location>/metadata/` when it lives in
   * the warehouse, else its default folder (never a path outside the warehouse).
   */
  nextMetadataLocation (ns: readonly string[], name: string, location: string | undefined, previous?: string): string {
    const tablePath = location === undefined ? undefined : this.localPath(location)
    const dir = this.inside(tablePath) ? `file://${tablePath}` : this.defaultTableLocation(ns, name)
    const prevVersion = previous === undefined ? -1 : Number(VERSION.exec(path.basename(previous))?.[1] ?? -1)
    const version = String(prevVersion + 1).padStart(5, '0')
    return `${dir}/metadata/${version}-${randomUUID()}.metadata.json`
  }

  async readTable (location: string): Promise<WholeTableMetadata> {
    const stored = await this.#read(location, 'table')
    if (stored.kind !== 'table') throw new GateError(ERRORS.BAD_REQUEST, `Cannot read table metadata ${location}: it is view metadata (register it with register-view)`)
    return stored.metadata
  }

  async readView (location: string): Promise<ViewMetadata> {
    const stored = await this.#read(location, 'view')
    if (stored.kind !== 'view') throw new GateError(ERRORS.BAD_REQUEST, `Cannot read view metadata ${location}: it has no view-uuid (is it a table metadata file?)`)
    return stored.metadata
  }

  async #read (location: string, expected: Stored['kind']): Promise<Stored> {
    const held = this.memory ? this.#files.get(location) : this.#parsed.get(location)
    if (held !== undefined) return held
    const p = this.localPath(location)
    if (p === undefined) throw new GateError(ERRORS.NOT_FOUND, `Cannot read metadata file ${location}: not a local file`)
    let text: string
    try {
      text = await readFile(p, 'utf8')
    } catch (err) {
      throw new GateError(ERRORS.NOT_FOUND, `Cannot read metadata file ${location}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`)
    }
    let json: unknown
    try {
      json = parseJsonText(text)
    } catch (err) {
      throw new GateError(ERRORS.BAD_REQUEST, `Cannot read metadata file ${location}: ${(err as Error).message}`)
    }
    // A view file names itself by `view-uuid`; anything else is read as what the caller expects.
    const kind = isObject(json) && own(json, 'view-uuid') !== undefined && own(json, 'table-uuid') === undefined ? 'view' : expected
    const parsed = kind === 'view' ? parseViewMetadata(json) : parseWholeTableMetadata(json)
    const issue = parsed.issues[0]
    if (parsed.metadata === undefined || issue !== undefined) {
      throw new GateError(ERRORS.BAD_REQUEST, `Cannot read ${kind} metadata ${location}: ${issue?.message ?? 'unreadable'}${issue?.at !== undefined && issue.at !== '' ? ` (at ${issue.at})` : ''}`)
    }
    const stored = { kind, metadata: parsed.metadata } as Stored
    if (!this.memory) this.#parsed.set(location, stored, text.length)
    return stored
  }

  /**
   * The table metadata file at `location` (which holds `metadata`) as UTF-8 chunks, kept for the
   * next answers. Chunks are shared with earlier versions where their parts are the same.
   */
  tableFile (location: string, metadata: WholeTableMetadata): readonly Buffer[] {
    return this.#file(location, () => tableMetadataChunks(metadata))
  }

  viewFile (location: string, metadata: ViewMetadata): readonly Buffer[] {
    return this.#file(location, () => viewMetadataChunks(metadata))
  }

  #file (location: string, write: () => Buffer[]): readonly Buffer[] {
    let chunks = this.#texts.get(location)
    if (chunks === undefined) {
      chunks = write()
      this.#texts.set(location, chunks, byteLength(chunks))
    }
    return chunks
  }

  async writeTable (location: string, metadata: WholeTableMetadata): Promise<void> {
    await this.#write(location, { kind: 'table', metadata })
  }

  async writeView (location: string, metadata: ViewMetadata): Promise<void> {
    await this.#write(location, { kind: 'view', metadata })
  }

  async #write (location: string, stored: Stored): Promise<void> {
    if (this.memory) {
      this.#files.set(location, stored)
      this.#forgetOldVersions(location, stored)
      return
    }
    const p = this.localPath(location)
    if (!this.inside(p)) throw new Error(`refusing to write outside the warehouse: ${location}`)
    const chunks = stored.kind === 'table' ? this.tableFile(location, stored.metadata) : this.viewFile(location, stored.metadata)
    await mkdir(path.dirname(p), { recursive: true })
    await writeAtomically(p, chunks)
    this.#parsed.set(location, stored, byteLength(chunks))
  }

  /**
   * In memory, a table keeps the files its metadata-log still names (the window set by
   * `write.metadata.previous-versions-max`, 100 by default) and no more. A view's metadata has no
   * such log (its `versions` and `version-log` live inside the file, and nothing reads a view's
   * earlier files), so a view keeps its current file only. Versions share what they have in common,
   * so a kept version costs what it changed, not its whole size.
   */
  #forgetOldVersions (location: string, stored: Stored): void {
    const keep = new Set([location])
    if (stored.kind === 'table') {
      for (const entry of stored.metadata.data.metadataLog) {
        const file = own(entry, 'metadata-file')
        if (typeof file === 'string') keep.add(file)
      }
    }
    const folder = location.slice(0, location.lastIndexOf('/') + 1)
    for (const file of this.#files.keys()) {
      if (file.startsWith(folder) && !keep.has(file)) this.#forget(file)
    }
  }

  /**
   * Deletes what a purge may delete, only inside the warehouse: the files the metadata names
   * (metadata files, manifest lists, statistics) and, when the table lives in its own default
   * folder, that folder's data/ and metadata/ trees. A table moved elsewhere with set-location
   * could share a folder with another table, so its folder is never removed wholesale.
   */
  async purge (metadata: WholeTableMetadata, location: string, ownFolder: string): Promise<void> {
    const d = metadata.data
    const files = [location, ...d.metadataLog.map(e => own(e, 'metadata-file'))]
    for (const s of d.snapshots) files.push(own(s, 'manifest-list'))
    for (const f of [...d.statistics, ...d.partitionStatistics]) files.push(own(f, 'statistics-path'))
    for (const f of files) {
      if (typeof f !== 'string') continue
      this.#forget(f)
      const p = this.localPath(f)
      if (!this.memory && this.inside(p)) await unlink(p).catch(() => {})
    }
    const tablePath = metadata.location === ownFolder ? this.localPath(ownFolder) : undefined
    if (this.memory || !this.inside(tablePath)) return
    // Iceberg's layout keeps data under data/ and metadata under metadata/; remove both, then the folder if empty.
    await rm(path.join(tablePath, 'data'), { recursive: true, force: true })
    await rm(path.join(tablePath, 'metadata'), { recursive: true, force: true })
    await rmdir(tablePath).catch(() => {})
  }

  async forget (location: string): Promise<void> {
    this.#forget(location)
    const p = this.localPath(location)
    if (!this.memory && this.inside(p)) await unlink(p).catch(() => {})
  }

  #forget (location: string): void {
    this.#files.delete(location)
    this.#parsed.delete(location)
    this.#texts.delete(location)
    this.#texts.delete(`${location}\u0000refs`)
  }

  async #loadState (): Promise<void> {
    let text: string
    try {
      text = await readFile(path.join(this.root, STATE_FILE), 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
      throw err
    }
    const raw = JSON.parse(text) as { namespaces?: unknown[], tables?: unknown[], views?: unknown[] }
    const namespaces = new Map<string, NamespaceRecord>()
    const tables = new Map<string, TableRecord>()
    const views = new Map<string, ViewRecord>()
    for (const n of raw.namespaces ?? []) {
      const r = n as { namespace: string[], properties?: unknown }
      namespaces.set(namespaceSegment(r.namespace), { levels: r.namespace, properties: readStringMap(r.properties) ?? Object.create(null) })
    }
    for (const t of raw.tables ?? []) {
      const r = t as { namespace: string[], name: string, 'metadata-location': string }
      tables.set(tableKey(r.namespace, r.name), { namespace: r.namespace, name: r.name, metadataLocation: r['metadata-location'] })
    }
    // State files written before views were supported have no `views`.
    for (const v of raw.views ?? []) {
      const r = v as { namespace: string[], name: string, 'metadata-location': string }
      views.set(tableKey(r.namespace, r.name), { namespace: r.namespace, name: r.name, metadataLocation: r['metadata-location'] })
    }
    this.#state = { namespaces, tables, views }
  }

  async #saveState (state: CatalogState): Promise<void> {
    const doc = {
      format: 1,
      namespaces: [...state.namespaces.values()].map(n => ({ namespace: n.levels, properties: n.properties })),
      tables: [...state.tables.values()].map(t => ({ namespace: t.namespace, name: t.name, 'metadata-location': t.metadataLocation })),
      views: [...state.views.values()].map(v => ({ namespace: v.namespace, name: v.name, 'metadata-location': v.metadataLocation }))
    }
    await writeAtomically(path.join(this.root, STATE_FILE), [Buffer.from(JSON.stringify(doc, null, 2), 'utf8')])
  }
}

const byteLength = (chunks: readonly Buffer[]): number => chunks.reduce((n, c) => n + c.length, 0)

/** Write to a temp file in the same folder, fsync, rename over the target, fsync the folder. */
async function writeAtomically (file: string, chunks: readonly Buffer[]): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`
  const fh = await open(tmp, 'wx')
  try {
    // writev in slices: the platform takes a bounded number of buffers per call (IOV_MAX).
    for (let i = 0; i < chunks.length; i += 1024) {
      const slice = chunks.slice(i, i + 1024)
      const want = byteLength(slice)
      const { bytesWritten } = await fh.writev(slice)
      if (bytesWritten !== want) await fh.writeFile(Buffer.concat(slice).subarray(bytesWritten))
    }
    await fh.sync()
  } finally {
    await fh.close()
  }
  try {
    await rename(tmp, file)
  } catch (err) {
    await unlink(tmp).catch(() => {})
    throw err
  }
  const dir = await open(path.dirname(file), 'r').catch(() => undefined)
  if (dir !== undefined) await dir.sync().catch(() => {}).finally(() => dir.close())
}
