// `journal encrypt`, `rekey` and `decrypt` (SPEC §13) as every adapter runs them: each rewrites every record's
// sealed fields (journals and history/) and every quarantined item through the one record-rewrite path
// (JournalStore.rewrite: all or nothing, re-chained, cache/ rebuilt), and records the store's key id
// (keys/store-key.json). A run stopped midway is run again: values already as they are to be are kept.
import type { Context } from '../context';
import { ALL_STORES } from '../../domain/stores';
import { resealBytes, resealData } from '../../journal/codec/cipher';
import { readStoreKeyMark, writeStoreKeyMark } from '../../journal/dir/store-key-mark';
import type { KeyChange, KeyChangeReport } from '../../output/store';
import { conflict, invalid } from '../../shared/errors';
import { keyNeeded, type StoreKey } from '../../shared/store-key';
import type { StoreTarget } from '../store';

export type { KeyChange } from '../../output/store';

const NOTE: Record<KeyChange, string> = { encrypt: 'encrypted', rekey: 'rekeyed', decrypt: 'decrypted' };

/** The keys a change opens with and seals with, checked against what the store records (exit 4, 5 or 6 before anything is written). */
function keysFor(change: KeyChange, recorded: string | undefined, given: StoreKey | undefined, next: StoreKey | undefined): { from?: StoreKey; to?: StoreKey } {
  if (given === undefined) throw invalid(`journal ${change} needs the store key`, 'give it with --key-file <file> or CRUX_KEY_FILE (crux key new makes one)');
  if (change === 'encrypt') {
    if (recorded !== undefined && recorded !== given.id)
      throw conflict(`the store is already encrypted, with key ${recorded}`, 'to change its key: crux journal rekey --new-key-file <file>');
    return { to: given };
  }
  if (recorded === undefined) throw conflict('the store is not encrypted', 'crux journal encrypt encrypts it');
  if (recorded !== given.id) throw keyNeeded(recorded, given);
  if (change === 'decrypt') return { from: given };
  if (next === undefined) throw invalid('journal rekey needs the new key', 'give it with --new-key-file <file>');
  return { from: given, to: next };
}

/** Every record, history piece and quarantined item resealed from `from` to `to` on the one rewrite path. */
function rewriteSealed(ctx: Context, change: KeyChange, from: StoreKey | undefined, to: StoreKey | undefined, extra: { storeKeyId?: string | null } = {}) {
  return ctx.dataDir.rewrite(
    ALL_STORES,
    ctx.nowIso,
    (record, spec) => {
      const data = resealData(spec, record.ev, record.data, from, to);
      return data === undefined ? undefined : { ...record, data };
    },
    { note: NOTE[change], doing: `journal ${change}`, quarantine: (bytes, name) => resealBytes(bytes, name, from, to), ...extra },
  );
}

export async function changeStoreKey(
  ctx: Context,
  target: StoreTarget,
  change: KeyChange,
  given: StoreKey | undefined,
  next?: StoreKey,
): Promise<KeyChangeReport> {
  if (target.kind !== 'dir') return changePgStoreKey(ctx, change, given, next);
  const root = target.path;
  const { from, to } = keysFor(change, readStoreKeyMark(root), given, next);
  // Encrypt records the key first: a write that comes while the journals are rewritten seals with it (or, without
  // the key, is refused); rekey and decrypt record the change once every record has it.
  if (change === 'encrypt') writeStoreKeyMark(root, to!.id);
  const result = await rewriteSealed(ctx, change, from, to);
  if (change !== 'encrypt') writeStoreKeyMark(root, to?.id);
  return { change, key_id: to?.id ?? null, journals: result.journals, quarantine: result.quarantine };
}

/**
 * The same on PostgreSQL: every row rewritten and the key id recorded (the `keys` row `store-key.json`) in one
 * transaction under the writers' lock, so a writer waits for it and then seals with the new key (or is refused).
 */
async function changePgStoreKey(ctx: Context, change: KeyChange, given: StoreKey | undefined, next?: StoreKey): Promise<KeyChangeReport> {
  const { parseStoreKeyRow, STORE_KEY_ROW } = await import('../../journal/pg/pg-store-key');
  const keys = ctx.dataDir.keys;
  const { from, to } = keysFor(change, parseStoreKeyRow(await keys.read(STORE_KEY_ROW), keys.describe(STORE_KEY_ROW)), given, next);
  const result = await rewriteSealed(ctx, change, from, to, { storeKeyId: to?.id ?? null });
  return { change, key_id: to?.id ?? null, journals: result.journals, quarantine: result.quarantine };
}
