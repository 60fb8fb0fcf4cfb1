// A whole-store state cached in the database (StoreSpec.snapshot): `case retrieve` over 100k cases decodes one
// row and folds the records after it, instead of folding every row. Derived data, and so verified before it is
// trusted: it names the row it was taken at (line, seq, hash), and carries the SHA-256 of its bytes; a snapshot
// whose row is not in the journal as named (the journal was compacted or repaired since), whose bytes do not
// hash to its digest (an edited or damaged row), or of another codec version, is ignored; so is every snapshot of
// a journal without its guard (pg-trust.ts), whose trigger deletes the snapshot when anything but crux writes a row.
import type { ChainHead } from '../codec/record';
import type { StoreSpec } from '../codec/store-spec';
import type { Sql } from './client';
import { journalTable, type Catalog } from './schema';

/** A snapshot is written by a reader that folded at least this many rows past it (or the whole journal). */
export const SNAPSHOT_AFTER_ROWS = 2000;

export interface PgSnapshot<S> {
  readonly state: S;
  readonly line: number;
  readonly head: ChainHead;
}

/**
 * The journal's snapshot as a state, when there is one that this codec reads and that names a row as it is, and the
 * journal's table is guarded (pg-trust.ts: a row edited by hand before the one the snapshot names deleted it; a
 * journal without its guard may have been). `journal check` compares a snapshot with its replay whatever the guard
 * (`unguarded`).
 */
export async function loadPgSnapshot<S>(
  q: Sql,
  ident: (t: string) => string,
  catalog: Catalog,
  spec: StoreSpec<S>,
  opts: { unguarded?: boolean } = {},
): Promise<PgSnapshot<S> | undefined> {
  const codec = spec.snapshot;
  const journal = journalTable(spec.file);
  if (codec === undefined || !catalog.tables.has('snapshots') || !catalog.tables.has(journal)) return undefined;
  if (opts.unguarded !== true && !catalog.guarded.has(journal)) return undefined;
  // As base64 text: the client parses bytea's hex form at about half that speed (12 MB: 400 ms against 250 ms).
  const [row] = await q.unsafe<{ line: string; seq: string; h: string; digest: string; b64: string }[]>(
    `select s.line, s.seq, s.h, s.digest, encode(s.bytes, 'base64') as b64 from ${ident('snapshots')} s join ${ident(journalTable(spec.file))} j
       on j.line = s.line and j.seq = s.seq and j.h = s.h
     where s.journal = $1 and s.codec = $2`,
    [spec.file, codec.version],
  );
  if (row === undefined) return undefined;
  const bytes = Buffer.from(row.b64, 'base64');
  if (digestOf(bytes) !== row.digest) return undefined;
  const state = codec.decode({ length: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) });
  return state === undefined ? undefined : { state, line: Number(row.line), head: { seq: Number(row.seq), h: row.h } };
}

/** Keeps a snapshot of `state`, which holds the journal up to the row `line` (best effort: a reader may lack the right). */
export async function savePgSnapshot<S>(sql: Sql, ident: (t: string) => string, spec: StoreSpec<S>, state: S, line: number, head: ChainHead): Promise<void> {
  const codec = spec.snapshot;
  if (codec === undefined || line === 0) return;
  const bytes = Buffer.from(codec.encode(state));
  await sql.unsafe(
    `insert into ${ident('snapshots')} (journal, codec, line, seq, h, digest, bytes) values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (journal) do update set codec = excluded.codec, line = excluded.line, seq = excluded.seq, h = excluded.h, digest = excluded.digest, bytes = excluded.bytes`,
    [spec.file, codec.version, line, head.seq, head.h, digestOf(bytes), bytes],
  );
}

const digestOf = (bytes: Uint8Array): string => (require('node:crypto') as typeof import('node:crypto')).createHash('sha256').update(bytes).digest('hex');
