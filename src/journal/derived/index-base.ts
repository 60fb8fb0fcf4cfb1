// The base of a store's index: sorted runs of entries, each a file of its own (cache/<journal>.idx.<id>: checksummed
// 4 KiB pages, sorted-table.ts), named by a manifest. The manifest lists the partitions — runs that split the sort
// order into ranges, each starting at its first entry — and the frozen runs: what writers added since, waiting to be
// merged into the partitions a few at a time (index-levels.ts). It also carries the binding of everything they hold
// to the journal and the live-bytes estimate.
//
// Two framings, no more. The index file (cache/<journal>.idx) is a block log (block-log.ts): its first block's meta
// is the manifest, the blocks after it the log writers append; a freeze or a merge step writes the whole file anew
// (temp + rename), the manifest first, then the log it carries on (a merge step's; a freeze's has none). A run is the
// sorted table's pages and nothing else (a spilled run's framing too), trusted only as the manifest names it: its
// size is its entries' pages, and its nonce seeds every page's checksum, so a run of another index, another version
// or another size does not verify.
import { fs } from '../../shared/fs';
import type { StoreSpec } from '../codec/store-spec';
import { crc32 } from './checksum';
import { combineTally } from './tally';
import { dropCacheFile, newNonce, oldCacheFiles, openCacheFile, writeCacheFile } from './cache-file';
import { encodeLog, readLog, type BlockMeta, type OpenLog } from './block-log';
import { ENTRY_WORDS, EntryList } from './entries';
import { SpillFailed } from './spill';
import { encodePages, PAGE_BYTES, PAGE_ENTRIES, SortedTable } from './sorted-table';

const INDEX_KIND = 'crux-index';
// v5: key lines and secondary entries carry the key's second hash in word 7 (entries.ts). v6: the tally (tally.ts).
// v7: a run is its pages alone (no header of its own); the manifest is the first block of the index file, whose later
// blocks are the log (the log was a file of its own, `.idx-log`, swept once).
const INDEX_VERSION = 7;

export const indexName = (file: string) => `${file}.idx`;
/** Where index v6 and before kept the log, a file of its own: swept. */
export const oldLogName = (file: string) => `${file}.idx-log`;
/** The index file's size past which it is not read (its log is frozen long before: store-index.ts). */
const INDEX_MAX_BYTES = 16 * 1024 * 1024;
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

/** The manifest: the meta of the index file's first block (its binding and live-bytes estimate: what the base covers). */
export interface Manifest extends BlockMeta {
  readonly parts: readonly RunRef[];
  readonly frozen: readonly FrozenRef[];
  /** Runs replaced by the last merge step, removed by the next (a reader may still be reading them). */
  readonly retired: readonly string[];
}

interface IndexHeader {
  readonly kind: typeof INDEX_KIND;
  readonly v: number;
  /** The store's index declaration (its secondary names and version): another declaration's index is not read. */
  readonly store: string;
  readonly nonce: number;
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

/** The index file — its manifest, and the log after it — if there is one that verifies for this store's declaration. */
export function openIndexFile(root: string, spec: StoreSpec<any>): { manifest: Manifest; log: OpenLog } | undefined {
  const tag = storeTag(spec);
  const accept = (h: IndexHeader) => h.kind === INDEX_KIND && h.v === INDEX_VERSION && h.store === tag;
  const log = readLog(root, indexName(spec.file), accept, INDEX_MAX_BYTES);
  const m = log?.first as Manifest | undefined;
  if (log === undefined || m === undefined) return undefined;
  const { parts, frozen, retired } = m;
  if (!Array.isArray(parts) || !parts.every(isRun) || !Array.isArray(frozen) || !Array.isArray(retired)) return undefined;
  const frozenOk = (f: FrozenRef, i: number) =>
    isRun(f) && Number.isInteger(f.cursor) && f.cursor >= 0 && f.cursor <= parts.length && (i === 0 || f.cursor === 0);
  if (!frozen.every(frozenOk)) return undefined;
  const manifest = { binding: m.binding, live: m.live, parts, frozen, retired: retired.filter((id: unknown) => typeof id === 'string') };
  return { manifest, log };
}

/** The manifest, if there is an index file that verifies for this store's declaration. */
export const openManifest = (root: string, spec: StoreSpec<any>): Manifest | undefined => openIndexFile(root, spec)?.manifest;

/**
 * Writes the index file anew (temp + rename): the manifest, then, as one block, the log it carries on (`log`: the
 * entries written since the manifest's binding, and the meta of the state after them). False when not written.
 */
export function writeManifest(root: string, spec: StoreSpec<any>, m: Manifest, log?: { entries: Uint32Array; meta: BlockMeta }): boolean {
  const header: IndexHeader = { kind: INDEX_KIND, v: INDEX_VERSION, store: storeTag(spec), nonce: newNonce() };
  const meta: Manifest = { binding: m.binding, live: m.live, parts: m.parts, frozen: m.frozen, retired: m.retired };
  const blocks: { entries: Uint32Array; meta: BlockMeta }[] = [{ entries: new Uint32Array(0), meta }];
  if (log !== undefined && log.entries.length > 0) blocks.push(log);
  return writeCacheFile(root, indexName(spec.file), encodeLog(header, blocks));
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

/** Removes every index file of a journal: the manifest with its log, and every run (named or not). */
export function dropIndexFiles(root: string, file: string): void {
  dropCacheFile(root, indexName(file));
  dropCacheFile(root, oldLogName(file));
  for (const id of strayRuns(root, file, new Set(), 0)) dropRun(root, file, id);
}

/** Run files of `file` not in `known` and not written in the last `minAgeMs` (a concurrent writer's, about to be named). */
export function strayRuns(root: string, file: string, known: ReadonlySet<string>, minAgeMs: number): string[] {
  const prefix = `${file}.idx.`;
  return oldCacheFiles(root, prefix, /^[0-9a-f]{8}$/, minAgeMs)
    .map((name) => name.slice(prefix.length))
    .filter((id) => !known.has(id));
}

/**
 * Partitions of at most `per` entries from entries given in sort order (a rebuild's, a replay's, a merge's split), each
 * encoded in one page buffer kept from one to the next. Throws SpillFailed when one could not be written.
 */
export class PartWriter {
  private part: EntryList;
  /** The pages of a partition, reused from one to the next. */
  private pages: Buffer | undefined;
  readonly parts: RunRef[] = [];

  constructor(
    private readonly root: string,
    private readonly file: string,
    private readonly per: number,
  ) {
    this.part = new EntryList(per);
  }

  /** Entry `i` of `words`, with word 7 set to `w7`. */
  push(words: Uint32Array, i: number, w7 = words[i * ENTRY_WORDS + 7]!): void {
    if (this.part.count >= this.per) this.write();
    const x = i * ENTRY_WORDS;
    this.part.push(words[x]!, words[x + 1]!, words[x + 2]!, words[x + 3]!, words[x + 4]!, words[x + 5]!, words[x + 6]!, w7);
  }

  pushWords(w0: number, w1: number, w2: number, w3: number, w4: number, w5: number, w6: number, w7: number): void {
    if (this.part.count >= this.per) this.write();
    this.part.push(w0, w1, w2, w3, w4, w5, w6, w7);
  }

  /** The partitions (one empty one for no entries at all). */
  finish(): RunRef[] {
    if (this.part.count > 0 || this.parts.length === 0) this.write();
    return this.parts;
  }

  private write(): void {
    this.pages ??= Buffer.allocUnsafeSlow(Math.ceil(this.per / PAGE_ENTRIES) * PAGE_BYTES);
    const run = writeRun(this.root, this.file, this.part.view(), this.pages);
    if (run === undefined) throw new SpillFailed(`${this.file}: an index partition could not be written`);
    this.parts.push(run);
    this.part.count = 0;
  }
}
