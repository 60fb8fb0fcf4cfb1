// The base of a store's index (cache/<journal>.idx): its header, opening it when it verifies, and writing a
// whole new one — from a replay, or merged from the old base and what was added since.
import { fs } from '../../shared/fs';
import type { StoreSpec } from '../store-spec';
import { dropCacheFile, openCacheFile, encodeHeader, isBinding, newNonce, readHeader, writeCacheFile, type JournalBinding } from './cache-file';
import { compareAt, ENTRY_WORDS, EntryList, KEY_SPACE } from './entries';
import { keepLatest, latestSecondaries, secondaryEntries } from './index-entries';
import { DerivedDamage, encodePages, PAGE_BYTES, PAGE_ENTRIES, PAGES_START, SortedTable } from './sorted-table';

const INDEX_KIND = 'crux-index';
export const INDEX_VERSION = 3;

export const indexName = (file: string) => `${file}.idx`;
export const logName = (file: string) => `${file}.idx-log`;

export interface BaseHeader {
  readonly kind: typeof INDEX_KIND;
  readonly v: number;
  /** The store's index declaration (its secondary names and version): another declaration's index is not read. */
  readonly store: string;
  readonly nonce: number;
  readonly binding: JournalBinding;
  readonly live: number;
  readonly entries: number;
  readonly pages: number;
}

export interface OpenBase {
  readonly header: BaseHeader;
  readonly table: SortedTable;
  readonly fd: number;
}

const storeTag = (spec: StoreSpec<any>) => `${spec.file}:${spec.secondary?.version ?? 0}:${(spec.secondary?.names ?? []).join(',')}`;

/** The base, if there is one whose header verifies for this store's declaration (close its fd when done). */
export function openBase(root: string, spec: StoreSpec<any>): OpenBase | undefined {
  const fd = openCacheFile(root, indexName(spec.file));
  if (fd === undefined) return undefined;
  let ok = false;
  try {
    const header = readHeader<BaseHeader>(fd);
    if (header?.kind !== INDEX_KIND || header.v !== INDEX_VERSION || header.store !== storeTag(spec) || !isBinding(header.binding)) return undefined;
    const { entries, pages } = header;
    if (!Number.isSafeInteger(entries) || entries < 0 || pages !== Math.ceil(entries / PAGE_ENTRIES) || !Number.isInteger(header.nonce)) return undefined;
    if (fs.fstatSync(fd).size !== PAGES_START + pages * PAGE_BYTES) return undefined;
    ok = true;
    return { header, table: new SortedTable(fd, header.nonce, pages, entries), fd };
  } finally {
    if (!ok) fs.closeSync(fd);
  }
}

/** Writes a whole new base (temp + rename) and removes the log it replaces. */
export function writeBase(root: string, spec: StoreSpec<any>, sorted: Uint32Array, binding: JournalBinding, live: number): void {
  const nonce = newNonce();
  const entries = sorted.length / ENTRY_WORDS;
  const header = encodeHeader({ kind: INDEX_KIND, v: INDEX_VERSION, store: storeTag(spec), nonce, binding, live, entries, pages: Math.ceil(entries / PAGE_ENTRIES) });
  const padding = Buffer.alloc(PAGES_START - header.length);
  // The log names the base it extends: once the new base is in place, the old log no longer applies.
  if (!writeCacheFile(root, indexName(spec.file), [header, padding, encodePages(sorted, nonce)])) dropIndexFiles(root, spec.file);
  else dropCacheFile(root, logName(spec.file));
}

/**
 * A whole index from a full replay: every record's key line (`records`, in journal order) and every entity's
 * secondary keys as `state` holds them.
 */
export function buildIndex<S>(root: string, spec: StoreSpec<S>, state: S, records: EntryList, keys: Iterable<string>, binding: JournalBinding, live: number): void {
  const all = new EntryList(records.count + 16);
  all.append(records);
  for (const key of keys) secondaryEntries(all, spec, state, key, binding.size, false);
  writeBase(root, spec, all.sorted(), binding, live);
}

/**
 * A new base: `base`'s entries and `extra`'s (the log's and what a write adds), each entity's latest secondary
 * entries only. False when a page of the old base does not verify (the caller drops the index).
 */
export function mergeBase(root: string, spec: StoreSpec<any>, base: OpenBase, extra: EntryList, binding: JournalBinding, live: number): boolean {
  const latest = latestSecondaries(extra);
  const merged = new EntryList(base.header.entries + extra.count);
  const fresh = EntryList.of(keepLatest(extra, latest)).sorted();
  let f = 0;
  const freshCount = fresh.length / ENTRY_WORDS;
  try {
    base.table.all((w, i) => {
      const x = i * ENTRY_WORDS;
      // A secondary entry superseded by a later one of the same entity is dropped.
      if (w[x]! >>> 24 !== KEY_SPACE && latest.has(`${w[x]! >>> 24}:${w[x + 2]}:${w[x + 3]}`)) return;
      while (f < freshCount && compareAt(fresh, f, w, i) < 0) merged.pushFrom(fresh, f++);
      merged.pushFrom(w, i);
    });
  } catch (error) {
    if (!(error instanceof DerivedDamage)) throw error;
    return false;
  }
  while (f < freshCount) merged.pushFrom(fresh, f++);
  writeBase(root, spec, merged.view(), binding, live);
  return true;
}

export function dropIndexFiles(root: string, file: string): void {
  dropCacheFile(root, logName(file));
  dropCacheFile(root, indexName(file));
}
