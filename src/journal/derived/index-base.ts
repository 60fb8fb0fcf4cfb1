// The base of a store's index: sorted runs of entries, each a file of its own (cache/<journal>.idx.<id>: a
// header, then checksummed 4 KiB pages, sorted-table.ts), named by a manifest (cache/<journal>.idx). The
// manifest lists the partitions — runs that split the sort order into ranges, each starting at its first
// entry — and the frozen runs: what writers added since, waiting to be merged into the partitions a few at a
// time (index-levels.ts). It also carries the binding of everything they hold to the journal, the live-bytes
// estimate, and a generation nonce that the index log (delta-log.ts) names: a log extends one generation.
//
// Manifest: the 512-byte header (cache-file.ts), then a JSON body ({parts, frozen, retired}) whose length and
// CRC-32 the header gives. Run: the sorted table's pages and nothing else (sorted-table.ts; a spilled run's framing
// too), trusted only as the manifest names it: its size is its entries' pages, and its nonce seeds every page's
// checksum, so a run of another index, another version or another size does not verify.
import { fs } from '../../shared/fs';
import type { StoreSpec } from '../codec/store-spec';
import { crc32 } from './checksum';
import { combineTally } from './tally';
import {
  dropCacheFile,
  isBinding,
  newNonce,
  oldCacheFiles,
  openCacheFile,
  readBodyFile,
  writeBodyFile,
  writeCacheFile,
  type JournalBinding,
} from './cache-file';
import { ENTRY_WORDS } from './entries';
import { encodePages, PAGE_BYTES, PAGE_ENTRIES, SortedTable } from './sorted-table';

const INDEX_KIND = 'crux-index';
// v5: key lines and secondary entries carry the key's second hash in word 7 (entries.ts). v6: the tally (tally.ts).
// v7: a run is its pages alone (no header of its own).
const INDEX_VERSION = 7;

export const indexName = (file: string) => `${file}.idx`;
export const logName = (file: string) => `${file}.idx-log`;
const runName = (file: string, id: string) => `${file}.idx.${id}`;

/** A run as the manifest names it: its file's id, the nonce its pages are checksummed with, its size and first entry. */
export interface RunRef {
  readonly id: string;
  readonly nonce: number;
  readonly entries: number;
  /** The first entry's sort words (0–3); empty for an empty run. */
  readonly first: readonly number[];
}

/** A frozen run; only the first one merges, and `cursor` partitions of the manifest already hold its entries. */
export interface FrozenRef extends RunRef {
  readonly cursor: number;
}

export interface Manifest {
  /** The generation: a log extends the manifest whose nonce it names (merging keeps it; freezing renews it). */
  readonly nonce: number;
  readonly binding: JournalBinding;
  readonly live: number;
  readonly parts: readonly RunRef[];
  readonly frozen: readonly FrozenRef[];
  /** Runs replaced by the last merge step, removed by the next (a reader may still be reading them). */
  readonly retired: readonly string[];
}

interface ManifestHeader {
  readonly kind: typeof INDEX_KIND;
  readonly v: number;
  /** The store's index declaration (its secondary names and version): another declaration's index is not read. */
  readonly store: string;
  readonly nonce: number;
  readonly binding: JournalBinding;
  readonly live: number;
}

// The store's secondary names as the index was built for them: spelled out, or (many names: the header holds 503
// bytes) their count and checksum.
const storeTag = (spec: StoreSpec<any>) => {
  const names = (spec.secondary?.names ?? []).join(',');
  const tag = names.length <= 240 ? names : `${spec.secondary!.names.length} names ${crc32(Buffer.from(names)).toString(16)}`;
  const tally = spec.tally === undefined ? '' : `:tally ${crc32(Buffer.from(spec.tally.series.join(','))).toString(16)}`;
  return `${spec.file}:${spec.secondary?.version ?? 0}:${tag}${tally}`;
};

const isRun = (r: any): r is RunRef =>
  r !== null &&
  typeof r === 'object' &&
  typeof r.id === 'string' &&
  /^[0-9a-f]{8}$/.test(r.id) &&
  Number.isInteger(r.nonce) &&
  Number.isSafeInteger(r.entries) &&
  r.entries >= 0 &&
  Array.isArray(r.first) &&
  r.first.length === (r.entries === 0 ? 0 : 4) &&
  r.first.every((w: unknown) => Number.isInteger(w));

/** The manifest, if there is one that verifies for this store's declaration. */
export function openManifest(root: string, spec: StoreSpec<any>): Manifest | undefined {
  const read = readBodyFile<ManifestHeader>(
    root,
    indexName(spec.file),
    (h) => h.kind === INDEX_KIND && h.v === INDEX_VERSION && h.store === storeTag(spec) && isBinding(h.binding),
    () => 0,
    16 * 1024 * 1024,
  );
  if (read === undefined) return undefined;
  try {
    const { parts, frozen, retired } = JSON.parse(read.body.toString('utf8'));
    if (!Array.isArray(parts) || !parts.every(isRun) || !Array.isArray(frozen) || !Array.isArray(retired)) return undefined;
    const frozenOk = (f: FrozenRef, i: number) =>
      isRun(f) && Number.isInteger(f.cursor) && f.cursor >= 0 && f.cursor <= parts.length && (i === 0 || f.cursor === 0);
    if (!frozen.every(frozenOk)) return undefined;
    const { nonce, binding, live } = read.header;
    return { nonce, binding, live, parts, frozen, retired: retired.filter((id: unknown) => typeof id === 'string') };
  } catch {
    return undefined;
  }
}

/** Writes the manifest (temp + rename). False when it could not be written. */
export function writeManifest(root: string, spec: StoreSpec<any>, m: Manifest): boolean {
  const body = Buffer.from(JSON.stringify({ parts: m.parts, frozen: m.frozen, retired: m.retired }));
  const fields = { kind: INDEX_KIND, v: INDEX_VERSION, store: storeTag(spec), nonce: m.nonce, binding: m.binding, live: m.live };
  return writeBodyFile(root, indexName(spec.file), fields, body);
}

/** Writes `given` (sorted; the tally's counts of one hour and series summed: tally.ts) as a new run file (its pages encoded in `pages` when given: a writer's buffer, reused); undefined when it could not be written. */
export function writeRun(root: string, file: string, given: Uint32Array, pages?: Buffer): RunRef | undefined {
  const sorted = combineTally(given);
  const nonce = newNonce();
  const id = nonce.toString(16).padStart(8, '0');
  const entries = sorted.length / ENTRY_WORDS;
  if (!writeCacheFile(root, runName(file, id), [encodePages(sorted, nonce, pages)])) return undefined;
  return { id, nonce, entries, first: entries === 0 ? [] : Array.from(sorted.subarray(0, 4)) };
}

/** A run open for lookups (close `fd` when done); undefined when its file is not the size of the run the manifest names. */
export function openRun(root: string, file: string, ref: RunRef): { table: SortedTable; fd: number } | undefined {
  const fd = openCacheFile(root, runName(file, ref.id));
  if (fd === undefined) return undefined;
  const pages = Math.ceil(ref.entries / PAGE_ENTRIES);
  let size = -1;
  try {
    size = fs.fstatSync(fd).size;
  } catch {
    // Checked below: a run that cannot be measured is not used.
  }
  if (size !== pages * PAGE_BYTES) {
    fs.closeSync(fd);
    return undefined;
  }
  return { table: new SortedTable(fd, ref.nonce, pages, ref.entries), fd };
}

export function dropRun(root: string, file: string, id: string): void {
  dropCacheFile(root, runName(file, id));
}

/** Removes every index file of a journal: the manifest, the log and every run (named or not). */
export function dropIndexFiles(root: string, file: string): void {
  dropCacheFile(root, indexName(file));
  dropCacheFile(root, logName(file));
  for (const id of strayRuns(root, file, new Set(), 0)) dropRun(root, file, id);
}

/** Run files of `file` not in `known` and not written in the last `minAgeMs` (a concurrent writer's, about to be named). */
export function strayRuns(root: string, file: string, known: ReadonlySet<string>, minAgeMs: number): string[] {
  const prefix = `${file}.idx.`;
  return oldCacheFiles(root, prefix, /^[0-9a-f]{8}$/, minAgeMs)
    .map((name) => name.slice(prefix.length))
    .filter((id) => !known.has(id));
}
