// `journal copy`: every journal of one store, record for record, with its history and key items, from one
// consistent view of the source (its lock, or one read-only repeatable-read transaction), into an empty store of
// either kind; streamed, so that memory stays flat in the number of records (SPEC §11).
import { CruxError } from '../../shared/errors';
import { ChainVerifier } from '../codec/verify';
import type { JournalStore, StoreView } from './store-boundary';
import { journalName, type StoreSpec } from '../codec/store-spec';

export interface CopyReport {
  readonly from: string;
  readonly to: string;
  readonly journals: { name: string; file: string; records: number }[];
  readonly keys: string[];
}

/** What a streamed verification found: the records that fold, and the first problem (line, reason). */
interface Verdict {
  records: number;
  problem: { line: number; reason: string } | undefined;
}

/**
 * Verifies lines as `journal check` does (format, hashes, chain, sequence, batches, vocabulary) while they stream
 * past, holding nothing of them, and hands each on; `verdict` is filled in at the end. A batch still open at the
 * end is a problem (a table never holds one; a file's torn tail is not copied). A history piece is verified as
 * history is (`history`: its compaction may leave out restatements that history already holds).
 */
async function* verified(
  lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  spec: StoreSpec<unknown>,
  verdict: Verdict,
  history = false,
): AsyncIterable<Uint8Array> {
  // Nothing of a record is kept while its batch is open (`keep`: a number), nor handed anywhere after.
  const verifier = new ChainVerifier(
    spec.vocabulary,
    () => {},
    undefined,
    history,
    () => 0,
  );
  let line = 0;
  let offset = 0;
  for await (const bytes of lines) {
    line += 1;
    const text = Buffer.from(bytes).toString('utf8');
    verifier.visit(text, { line, offset, length: bytes.length }, () => !Buffer.from(text).equals(Buffer.from(bytes)));
    offset += bytes.length + 1;
    yield bytes;
  }
  const result = verifier.finish();
  verdict.records = result.records;
  const first = result.problems[0] ?? (result.open === undefined ? undefined : { line: result.open.at.line, reason: 'incomplete batch (torn tail)' });
  verdict.problem = first === undefined ? undefined : { line: first.line, reason: first.reason };
}

/** Drains a stream through `verified`: the verdict of a journal (or a history piece) read once. */
async function verify(lines: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, spec: StoreSpec<unknown>, history = false): Promise<Verdict> {
  const verdict: Verdict = { records: 0, problem: undefined };
  for await (const _ of verified(lines, spec, verdict, history));
  return verdict;
}

/** Verifies a journal's history pieces and then its lines, in one view; the first problem, named by where it is. */
async function verifyView(view: StoreView, spec: StoreSpec<unknown>): Promise<{ records: number; problem?: string }> {
  for (const piece of await view.history(spec.file)) {
    const { problem } = await verify(piece.lines, spec, true);
    if (problem !== undefined) return { records: 0, problem: `history/${piece.name} line ${problem.line}: ${problem.reason}` };
  }
  const { records, problem } = await verify(view.lines(spec.file), spec);
  return problem === undefined ? { records } : { records, problem: `${spec.file} line ${problem.line}: ${problem.reason}` };
}

async function hasLines(store: JournalStore, file: string): Promise<boolean> {
  for await (const _ of store.rawLines(file)) return true;
  return false;
}

/**
 * Copies `specs`' journals and every key item from `source` into `target`, which must hold no records and no
 * keys. The source must verify (a damaged line has no place in a table): `journal check --repair` first. It is
 * verified in one pass over the consistent view before anything is written, then copied in a second; each journal
 * arrives whole or not at all, and the target is verified afterwards. Nothing is held but a chunk of lines.
 */
export async function copyStore(source: JournalStore, target: JournalStore, specs: readonly StoreSpec<unknown>[]): Promise<CopyReport> {
  if (source.location === target.location) throw new CruxError('usage', `--to names the store being copied (${source.location})`, 'name another store');
  let occupied: string | undefined;
  for (const spec of specs) if (occupied === undefined && (await hasLines(target, spec.file))) occupied = spec.file;
  const targetKeys = await target.keys.list();
  if (occupied !== undefined || targetKeys.length > 0) {
    const what = occupied !== undefined ? `${occupied} has records` : `it has key items (${targetKeys.join(', ')})`;
    throw new CruxError(
      'conflict',
      `${target.location} is not empty: ${what}; nothing was copied`,
      'copy into an empty store (a new directory, or a new ?schema=)',
    );
  }
  const copied = new Map<string, number>();
  const keys = await source.keys.list();
  await source.readConsistent(async (view) => {
    // First pass: the journals and their history verify, or nothing is copied.
    for (const spec of specs) {
      const { problem } = await verifyView(view, spec);
      if (problem !== undefined) {
        throw new CruxError('journal_damaged', `${source.location}: ${problem}; nothing was copied`, 'run `crux journal check --repair` on the source first');
      }
    }
    for (const name of keys) {
      const bytes = await source.keys.read(name);
      if (bytes !== undefined) await target.keys.create(name, bytes);
    }
    // Second pass: each journal streamed into the target, its lines first, then its history (one cursor at a time).
    for (const spec of specs) {
      const verdict: Verdict = { records: 0, problem: undefined };
      await target.restore(spec.file, verified(view.lines(spec.file), spec, verdict), await view.history(spec.file));
      copied.set(spec.file, verdict.records);
    }
  });
  const journals: CopyReport['journals'] = [];
  await target.readConsistent(async (view) => {
    for (const spec of specs) {
      const after = await verifyView(view, spec);
      if (after.problem !== undefined || after.records !== copied.get(spec.file)) {
        const why = after.problem ?? `${after.records} records where ${copied.get(spec.file)} were copied`;
        throw new CruxError('journal_damaged', `${target.location} does not verify after the copy: ${why}`, 'this is a bug: please report it');
      }
      journals.push({ name: journalName(spec.file), file: spec.file, records: after.records });
    }
  });
  return { from: source.location, to: target.location, journals, keys };
}
