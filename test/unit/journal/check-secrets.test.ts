// `journal check` counts the records that hold a secret in its own scan (core/check.ts, SecretTally): in the
// journal and in every history piece, by journal and kind, on both engines, never a value.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDir } from '../../../src/journal/dir/data-dir';
import { PgStore } from '../../../src/journal/pg/pg-store';
import { parseStoreUrl } from '../../../src/journal/pg/url';
import { SecretTally } from '../../../src/journal/core/secret-survey';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import type { EventDraft } from '../../../src/journal/codec/record';
import { ENGINES, tempDir, type StoreKind } from '../../helpers/cli';
import { freshStoreUrl } from '../../helpers/pg';
import { ITEM_STORE } from './fixtures';

const TS = '2026-11-29T21:00:00.000Z';
const GH = 'ghp_Zq3Xw9Lk2Pm8Rt5Yv1Bn6Cx4Dz7Fa0Gh3Jk9';
const AWS_ID = 'AKIAQ3EGRHNW4YT5XZPL';
const opened: PgStore[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

function open(kind: StoreKind): JournalStore {
  const reporter = { warn: () => {} };
  if (kind === 'dir') return new DataDir(join(tempDir(), 'data'), reporter, 5_000);
  const store = new PgStore(parseStoreUrl(freshStoreUrl('checksec')), { reporter, lockTimeoutMs: 5_000, cruxVersion: 'test', specs: [ITEM_STORE] });
  opened.push(store);
  return store;
}

const put = (id: string, value: unknown): EventDraft => ({ ev: 'item.put', data: { id, value } });

describe.each(ENGINES)('journal check counts secrets in its one scan (%s)', (kind) => {
  it('in the journal and its history, by kind, a record once per kind', async () => {
    const store = open(kind);
    const write = (drafts: EventDraft[]) =>
      store.write(async (tx) => {
        await tx.load(ITEM_STORE);
        tx.append(ITEM_STORE, drafts);
      }, TS);
    await write([put('k1', `GITHUB_TOKEN=${GH} and ${GH}`), put('k2', 'plain'), put('k3', { nested: [AWS_ID] })]);
    await write([put('k1', 'gone'), put('k2', 'still plain')]);
    await store.compact([ITEM_STORE], TS); // the three first records and the overwrites go to history
    await write([put('k4', `key ${AWS_ID}`)]);
    const secrets = new SecretTally();
    const [report] = await store.check([ITEM_STORE], { repair: false, ts: TS, secrets });
    expect(report).toMatchObject({ problems: [], history: { files: 1, problems: [] } });
    // k1's token: once (history); k3's key: history and the journal's restatement; k4's: the journal.
    expect(secrets.list()).toEqual([
      { journal: 'items.jsonl', kind: 'aws-access-key-id', records: 3 },
      { journal: 'items.jsonl', kind: 'github-token', records: 1 },
    ]);
    expect(JSON.stringify(secrets.list())).not.toContain(GH);
  });
});
