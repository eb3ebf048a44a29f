import { randomUUID } from 'node:crypto'
import { mkdir, open, readFile, rename, rm, rmdir, unlink } from 'node:fs/promises'
import path from 'node:path'
import { notFound } from './errors.js'
import { isObject, parseJson, stringifyJson, type JsonObject } from './json.js'
import { KeyedLock } from './lock.js'
import { nsKey, tableKey } from './paths.js'
import { stringMap } from './schema.js'

/**
 * Persistence of the embedded catalog. Two things are stored:
 * - table and view metadata files, written once and never changed, as the spec lays them out
 *   (`<table location>/metadata/<NNNNN>-<uuid>.metadata.json`);
 * - a small state file (namespaces with their properties, table or view → current metadata location),
 *   replaced atomically (temp file, fsync, rename), so a commit becomes visible all at once or
 *   not at all, for one table or for a whole transaction.
 * With `memory: true` both live in memory only.
 */

export interface NamespaceRecord { readonly levels: readonly string[], readonly properties: Readonly<Record<string, string>> }
export interface TableRecord { readonly namespace: readonly string[], readonly name: string, readonly metadataLocation: string }
/** A view has the same record as a table: its identifier and its current view metadata file. */
export type ViewRecord = TableRecord
export interface CatalogState {
  readonly namespaces: Map<string, NamespaceRecord>
  readonly tables: Map<string, TableRecord>
  /** Keyed like `tables` (`tableKey`); an identifier is a table or a view, never both. */
  readonly views: Map<string, ViewRecord>
}

const STATE_FILE = '.iceguard-catalog.json'
const CACHE_MAX = 512
/** Parsed metadata kept for reuse, by the length of its text: large tables must not fill the heap. */
const CACHE_MAX_CHARS = 32 * 1024 * 1024
const VERSION = /^(\d+)-.*\.metadata\.json$/

export interface StoreOptions { root: string, memory: boolean }

export class CatalogStore {
  readonly memory: boolean
  /** Absolute warehouse folder; every file the catalog writes or deletes lies inside it. */
  readonly root: string
  readonly rootUri: string
  #state: CatalogState = { namespaces: new Map(), tables: new Map(), views: new Map() }
  readonly #stateLock = new KeyedLock()
  readonly #files = new Map<string, string>()
  readonly #cache = new Map<string, { metadata: JsonObject, chars: number }>()
  #cachedChars = 0

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
   * Where the next metadata file of a table goes: `<location>/metadata/` when the table lives in
   * the warehouse, else the table's default folder (never a path outside the warehouse).
   */
  nextMetadataLocation (ns: readonly string[], name: string, metadata: JsonObject, previous?: string): string {
    const tablePath = typeof metadata.location === 'string' ? this.localPath(metadata.location) : undefined
    const dir = this.inside(tablePath) ? `file://${tablePath}` : this.defaultTableLocation(ns, name)
    const prevVersion = previous === undefined ? -1 : Number(VERSION.exec(path.basename(previous))?.[1] ?? -1)
    const version = String(prevVersion + 1).padStart(5, '0')
    return `${dir}/metadata/${version}-${randomUUID()}.metadata.json`
  }

  async readMetadata (location: string): Promise<JsonObject> {
    const cached = this.#cache.get(location)
    if (cached !== undefined) return cached.metadata
    let text = this.#files.get(location)
    if (text === undefined) {
      const p = this.localPath(location)
      if (p === undefined) throw notFound(`Cannot read metadata file ${location}: not a local file`)
      try {
        text = await readFile(p, 'utf8')
      } catch (err) {
        throw notFound(`Cannot read metadata file ${location}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`)
      }
    }
    const parsed = parseJson(text)
    if (!isObject(parsed)) throw notFound(`Cannot read metadata file ${location}: not a JSON object`)
    this.#remember(location, parsed, text.length)
    return parsed
  }

  /** Registers parsed metadata for a location without writing it (a registered file, normalized). */
  remember (location: string, metadata: JsonObject): void {
    this.#remember(location, metadata, stringifyJson(metadata).length)
  }

  async writeMetadata (location: string, metadata: JsonObject): Promise<void> {
    const text = stringifyJson(metadata, 2)
    if (this.memory) {
      this.#files.set(location, text)
      this.#forgetOldVersions(location, metadata)
    } else {
      const p = this.localPath(location)
      if (!this.inside(p)) throw new Error(`refusing to write outside the warehouse: ${location}`)
      await mkdir(path.dirname(p), { recursive: true })
      await writeAtomically(p, text)
    }
    this.#remember(location, metadata, text.length)
  }

  /**
   * In memory, a table keeps the files its metadata-log still names (the window set by
   * `write.metadata.previous-versions-max`, 100 by default) and no more: every commit writes the
   * whole metadata again, so keeping every version would grow with the square of the commits.
   * A view's metadata has no such log (its `versions` and `version-log` live inside the file, and
   * nothing reads a view's earlier files), so a view keeps its current file only.
   */
  #forgetOldVersions (location: string, metadata: JsonObject): void {
    let keep: Set<string>
    if (metadata['view-uuid'] !== undefined) {
      keep = new Set([location])
    } else {
      const log = (metadata['metadata-log'] ?? []) as JsonObject[]
      const oldest = log[0]?.['metadata-file']
      if (typeof oldest !== 'string') return
      keep = new Set([location, ...log.map(e => String(e['metadata-file']))])
    }
    const folder = location.slice(0, location.lastIndexOf('/') + 1)
    for (const file of this.#files.keys()) {
      if (file.startsWith(folder) && !keep.has(file)) {
        this.#files.delete(file)
        this.#forgetCached(file)
      }
    }
  }

  /**
   * Deletes what a purge may delete, only inside the warehouse: the files the metadata names
   * (metadata files, manifest lists, statistics) and, when the table lives in its own default
   * folder, that folder's data/ and metadata/ trees. A table moved elsewhere with set-location
   * could share a folder with another table, so its folder is never removed wholesale.
   */
  async purge (metadata: JsonObject, location: string, ownFolder: string): Promise<void> {
    const files = [location, ...((metadata['metadata-log'] ?? []) as JsonObject[]).map(e => String(e['metadata-file']))]
    for (const s of (metadata.snapshots ?? []) as JsonObject[]) if (typeof s['manifest-list'] === 'string') files.push(s['manifest-list'])
    for (const key of ['statistics', 'partition-statistics']) {
      for (const f of (metadata[key] ?? []) as JsonObject[]) if (typeof f['statistics-path'] === 'string') files.push(f['statistics-path'])
    }
    for (const f of files) {
      this.#files.delete(f)
      this.#forgetCached(f)
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
    this.#forgetCached(location)
    this.#files.delete(location)
    const p = this.localPath(location)
    if (!this.memory && this.inside(p)) await unlink(p).catch(() => {})
  }

  #remember (location: string, metadata: JsonObject, chars: number): void {
    this.#forgetCached(location)
    this.#cache.set(location, { metadata, chars })
    this.#cachedChars += chars
    // Least recently written first out; the newest entry always stays, however large.
    while (this.#cache.size > 1 && (this.#cache.size > CACHE_MAX || this.#cachedChars > CACHE_MAX_CHARS)) {
      this.#forgetCached(this.#cache.keys().next().value as string)
    }
  }

  #forgetCached (location: string): void {
    const entry = this.#cache.get(location)
    if (entry === undefined) return
    this.#cache.delete(location)
    this.#cachedChars -= entry.chars
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
      namespaces.set(nsKey(r.namespace), { levels: r.namespace, properties: stringMap(r.properties, 'namespace properties') })
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
    await writeAtomically(path.join(this.root, STATE_FILE), JSON.stringify(doc, null, 2))
  }
}

/** Write to a temp file in the same folder, fsync, rename over the target, fsync the folder. */
async function writeAtomically (file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`
  const fh = await open(tmp, 'wx')
  try {
    await fh.writeFile(text, 'utf8')
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
