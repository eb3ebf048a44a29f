/**
 * The data parts of a table (`TableData`: snapshots, their refs and logs, statistics, encryption
 * keys) as Java's `TableMetadata.Builder` changes them. Used by `metadata-builder.ts` only, for
 * metadata held whole; each list is copied on its first change, so an unchanged one is shared
 * with the version before. Problems go to the builder's issues through `issue`.
 */
import { longValue } from './json-text.js'
import { isObject, jsonEquals, own, toLongText } from './json-values.js'
import { plainRecord } from './parse.js'
import type { ApplyIssue, TableData, WireObject } from './types.js'

export const MAIN = 'main'
export const REF_RETENTION = ['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms'] as const

type Issue = (at: string, message: string, extra?: { exception?: ApplyIssue['exception'] }) => void
type ListKey = 'snapshots' | 'statistics' | 'partitionStatistics' | 'snapshotLog'

const snapshotIdOf = (s: WireObject): string | undefined => toLongText(own(s, 'snapshot-id'))

/** Java `SnapshotRef.equals`: the same snapshot, type and retention settings. */
function sameRef (a: WireObject, b: WireObject): boolean {
  if (own(a, 'type') !== own(b, 'type')) return false
  for (const key of ['snapshot-id', ...REF_RETENTION]) {
    if (toLongText(own(a, key) ?? undefined) !== toLongText(own(b, key) ?? undefined)) return false
  }
  return true
}

export class TableDataBuilder {
  /** Whether any data part changed. */
  changed = false
  /** `last-updated-ms` this change sets, when a snapshot or `main` dates it. */
  lastUpdatedMs: string | undefined
  private lastSequenceNumber: bigint
  private nextRowId: bigint
  private currentSnapshotId: string
  private refs: Record<string, WireObject>
  private snapshots: WireObject[]
  private statistics: WireObject[]
  private partitionStatistics: WireObject[]
  private snapshotLog: WireObject[]
  private encryptionKeys: WireObject[] | undefined
  private readonly copied = new Set<ListKey | 'refs'>()
  private byId: Map<string, WireObject> | undefined
  private readonly addedSnapshotIds = new Set<string>()

  constructor (private readonly base: TableData, private readonly now: number, private readonly issue: Issue) {
    this.lastSequenceNumber = BigInt(base.lastSequenceNumber)
    this.nextRowId = BigInt(base.nextRowId)
    this.currentSnapshotId = base.currentSnapshotId
    this.refs = base.refs as Record<string, WireObject>
    this.snapshots = base.snapshots as WireObject[]
    this.statistics = base.statistics as WireObject[]
    this.partitionStatistics = base.partitionStatistics as WireObject[]
    this.snapshotLog = base.snapshotLog as WireObject[]
    this.encryptionKeys = base.encryptionKeys as WireObject[] | undefined
  }

  private list (key: ListKey): WireObject[] {
    if (!this.copied.has(key)) { this[key] = [...this[key]]; this.copied.add(key) }
    return this[key]
  }

  private ownRefs (): Record<string, WireObject> {
    if (!this.copied.has('refs')) { this.refs = Object.assign(plainRecord<WireObject>(), this.refs); this.copied.add('refs') }
    return this.refs
  }

  private snapshotsById (): Map<string, WireObject> {
    if (this.byId === undefined) {
      this.byId = new Map()
      for (const s of this.snapshots) {
        const id = snapshotIdOf(s)
        if (id !== undefined) this.byId.set(id, s)
      }
    }
    return this.byId
  }

  /** Java `addSnapshot`: ids are unique, sequence numbers grow (v2+), row ids advance (v3). */
  addSnapshot (snapshot: WireObject, at: string, table: { formatVersion: number, hasSchema: boolean }): void {
    const id = snapshotIdOf(snapshot)
    const bad = (field: string, problem: string): void => this.issue(`${at}.${field}`, `Cannot add snapshot: ${field} ${problem}`)
    if (id === undefined || typeof own(snapshot, 'snapshot-id') === 'string') { bad('snapshot-id', 'must be an integer'); return }
    const timestamp = toLongText(own(snapshot, 'timestamp-ms'))
    if (timestamp === undefined) { bad('timestamp-ms', 'must be an integer'); return }
    const summary = own(snapshot, 'summary')
    if (summary !== undefined && summary !== null && !isObject(summary)) { bad('summary', 'must be an object'); return }
    const seqText = toLongText(own(snapshot, 'sequence-number'))
    if (table.formatVersion > 1 && seqText === undefined) { bad('sequence-number', 'must be an integer'); return }
    if (!table.hasSchema) { this.issue(at, 'Cannot add snapshot: no schema has been added', { exception: 'ValidationException' }); return }
    const byId = this.snapshotsById()
    if (byId.has(id)) { this.issue(`${at}.snapshot-id`, `Snapshot already exists for id: ${id}`, { exception: 'ValidationException' }); return }
    if (table.formatVersion > 1) {
      const seq = BigInt(seqText as string)
      const parent = own(snapshot, 'parent-snapshot-id')
      // Java RetryableValidationException: the client retries on fresh metadata.
      if (seq <= this.lastSequenceNumber && parent !== undefined && parent !== null) {
        this.issue(`${at}.sequence-number`, `Cannot add snapshot with sequence number ${seq} older than last sequence number ${this.lastSequenceNumber}`, { exception: 'CommitFailedException' })
        return
      }
      this.lastSequenceNumber = seq
    }
    if (table.formatVersion >= 3) {
      const firstRowId = toLongText(own(snapshot, 'first-row-id'))
      const addedRows = toLongText(own(snapshot, 'added-rows'))
      if (firstRowId === undefined) { this.issue(`${at}.first-row-id`, 'Cannot add a snapshot: first-row-id is null'); return }
      if (addedRows === undefined) { this.issue(`${at}.added-rows`, 'Cannot add a snapshot: added-rows is null'); return }
      if (BigInt(firstRowId) < this.nextRowId) {
        this.issue(`${at}.first-row-id`, `Cannot add a snapshot, first-row-id is behind table next-row-id: ${firstRowId} < ${this.nextRowId}`, { exception: 'CommitFailedException' })
        return
      }
      this.nextRowId += BigInt(addedRows)
    }
    this.list('snapshots').push(snapshot)
    byId.set(id, snapshot)
    this.addedSnapshotIds.add(id)
    this.lastUpdatedMs = timestamp
    this.changed = true
  }

  /**
   * Java `setRef`: the ref must name a known snapshot; setting `main` makes its snapshot current
   * and logs it (with the snapshot's own time when this commit added it, a rollback with now).
   * `snapshotId` is the wire value, kept as it came so a 64-bit id is written back digit for
   * digit. Says whether the ref changed (false also when it was refused).
   */
  setRef (name: string, type: 'branch' | 'tag', snapshotId: unknown, retention: Readonly<Record<string, unknown>>, at: string): boolean {
    const id = toLongText(snapshotId) as string
    const ref: Record<string, unknown> = { 'snapshot-id': snapshotId, type }
    for (const key of REF_RETENTION) if (retention[key] !== undefined) ref[key] = retention[key]
    const existing = Object.hasOwn(this.refs, name) ? this.refs[name] : undefined
    if (existing !== undefined && sameRef(existing, ref)) return false
    const snapshot = this.snapshotsById().get(id)
    if (snapshot === undefined) { this.issue(`${at}.snapshot-id`, `Cannot set ${name} to unknown snapshot: ${id}`, { exception: 'ValidationException' }); return false }
    if (this.addedSnapshotIds.has(id)) this.lastUpdatedMs = toLongText(own(snapshot, 'timestamp-ms'))
    if (name === MAIN) {
      this.currentSnapshotId = id
      this.lastUpdatedMs ??= String(this.now)
      this.list('snapshotLog').push({ 'timestamp-ms': longValue(this.lastUpdatedMs), 'snapshot-id': snapshotId })
    }
    this.ownRefs()[name] = ref
    this.changed = true
    return true
  }

  /** Java `removeRef`: removing `main` leaves the table without a current snapshot. */
  removeRef (name: string): void {
    if (name === MAIN && this.currentSnapshotId !== '-1') { this.currentSnapshotId = '-1'; this.changed = true }
    if (!Object.hasOwn(this.refs, name)) return
    delete this.ownRefs()[name]
    this.changed = true
  }

  /**
   * Java `removeSnapshots`: statistics of a removed snapshot go with it, and a snapshot-log entry
   * of a removed snapshot drops the history before it (no gaps in time travel). Returns the refs
   * left pointing at a removed snapshot, for the caller to remove.
   */
  removeSnapshots (ids: readonly unknown[]): string[] {
    const remove = new Set(ids.map(x => toLongText(x)))
    const kept = this.snapshots.filter(s => !remove.has(snapshotIdOf(s)))
    if (kept.length === this.snapshots.length) return []
    this.snapshots = kept
    this.byId = undefined
    const alive = this.snapshotsById()
    const lives = (o: WireObject): boolean => alive.has(snapshotIdOf(o) ?? '')
    this.statistics = this.statistics.filter(lives)
    this.partitionStatistics = this.partitionStatistics.filter(lives)
    const log: WireObject[] = []
    for (const entry of this.snapshotLog) {
      if (lives(entry)) log.push(entry)
      else log.length = 0
    }
    this.snapshotLog = log
    for (const key of ['snapshots', 'statistics', 'partitionStatistics', 'snapshotLog'] as const) this.copied.add(key)
    this.changed = true
    return Object.keys(this.refs).filter(name => !lives(this.refs[name] as WireObject))
  }

  /** set-statistics / set-partition-statistics: one file per snapshot, replaced as a whole. */
  setStatistics (key: 'statistics' | 'partitionStatistics', file: WireObject, at: string): void {
    const id = snapshotIdOf(file)
    if (id === undefined || typeof own(file, 'snapshot-id') === 'string') { this.issue(`${at}.snapshot-id`, 'Cannot set statistics: snapshot-id must be an integer'); return }
    const i = this[key].findIndex(f => snapshotIdOf(f) === id)
    if (i >= 0 && jsonEquals(this[key][i], file)) return
    const files = this.list(key)
    if (i >= 0) files[i] = file
    else files.push(file)
    this.changed = true
  }

  removeStatistics (key: 'statistics' | 'partitionStatistics', snapshotId: string): void {
    const kept = this[key].filter(f => snapshotIdOf(f) !== snapshotId)
    if (kept.length === this[key].length) return
    this[key] = kept
    this.copied.add(key)
    this.changed = true
  }

  /** Java `addEncryptionKey`: a key id already present is left as it is. */
  addEncryptionKey (key: WireObject, at: string): void {
    const keyId = own(key, 'key-id')
    if (typeof keyId !== 'string') { this.issue(`${at}.key-id`, 'Cannot add encryption key: key-id must be a string'); return }
    if (typeof own(key, 'encrypted-key-metadata') !== 'string') { this.issue(`${at}.encrypted-key-metadata`, 'Cannot add encryption key: encrypted-key-metadata must be a string'); return }
    if ((this.encryptionKeys ?? []).some(k => own(k, 'key-id') === keyId)) return
    this.encryptionKeys = [...(this.encryptionKeys ?? []), key]
    this.changed = true
  }

  removeEncryptionKey (keyId: string): void {
    if (this.encryptionKeys === undefined) return
    const kept = this.encryptionKeys.filter(k => own(k, 'key-id') !== keyId)
    if (kept.length === this.encryptionKeys.length) return
    this.encryptionKeys = kept
    this.changed = true
  }

  /** The data parts as the changes so far left them (`metadata-log` is the build's to extend). */
  result (): TableData {
    const b = this.base
    return {
      lastSequenceNumber: this.lastSequenceNumber.toString(),
      lastUpdatedMs: this.lastUpdatedMs ?? b.lastUpdatedMs,
      nextRowId: this.nextRowId.toString(),
      currentSnapshotId: this.currentSnapshotId,
      refs: this.refs,
      snapshots: this.snapshots,
      statistics: this.statistics,
      partitionStatistics: this.partitionStatistics,
      snapshotLog: this.snapshotLog,
      metadataLog: b.metadataLog,
      ...(this.encryptionKeys === undefined ? {} : { encryptionKeys: this.encryptionKeys }),
      extra: b.extra
    }
  }
}
