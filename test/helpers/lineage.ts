// A store whose journal has a lineage to rewrite (core/rewrite.ts): two history pieces (the second without the
// restatements the first compaction wrote), a journal after them, and a quarantined item; and every byte of it
// the store keeps, to compare before and after (test/unit/journal/rewrite-lineage, test/reliability/rewrite-crash).
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { EventDraft } from '../../src/journal/codec/record';
import type { StoreSpec } from '../../src/journal/codec/store-spec';
import type { JournalStore } from '../../src/journal/core/store-boundary';
import type { LineStore } from '../../src/journal/core/line-store';
import { ITEM_STORE, puts } from '../unit/journal/fixtures';
import { psql } from './pg';

export const T1 = '2026-11-29T21:00:00.000Z';
export const T2 = '2026-11-30T08:00:00.000Z';

/** Value 2 (key k2) is the "secret": in history piece 1, restated in the journal, and quarantined as "SECRET-2". */
export async function seedLineage(store: JournalStore, lines: LineStore, spec: StoreSpec<any> = ITEM_STORE): Promise<void> {
  const write = (drafts: EventDraft[], ts = T1) =>
    store.write(async (tx) => {
      await tx.load(spec);
      tx.append(spec, drafts);
    }, ts);
  await write(puts(3));
  await write([{ ev: 'item.deleted', data: { id: 'k1' } }]);
  await store.compact([spec], T1);
  await write(puts(2, 4));
  await write([{ ev: 'item.deleted', data: { id: 'k4' } }]);
  await store.compact([spec], T1);
  await write([...puts(1, 7), { ev: 'item.put', data: { id: 'k8', value: 8 } }]);
  await lines.locked(async (l) => void (await l.quarantine(ITEM_STORE.file, 'tail-at-0', 'torn {"value":"SECRET-2" and more', T1)));
}

/** Every byte the store keeps of journals, history and quarantine, by name (cache/ and derived rows apart). */
export function storeBytes(where: string): Map<string, string> {
  const out = new Map<string, string>();
  if (/^postgres(ql)?:/.test(where)) {
    const schema = new URL(where).searchParams.get('schema');
    const rows = (sql: string) => psql(sql, where).split('\n').filter(Boolean);
    out.set('journal', rows(`select body from ${schema}.journal_items order by line`).join('\n'));
    for (const r of rows(`select generation || ' ' || line || ' ' || body from ${schema}.history order by generation, line`))
      out.set(`history ${r.split(' ', 2).join(' ')}`, r);
    for (const r of rows(`select name || ' ' || encode(bytes, 'escape') from ${schema}.quarantine order by at, name`))
      out.set(`quarantine ${r.split(' ')[0]}`, r);
    return out;
  }
  const walk = (dir: string, rel: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (name === 'cache' || name.startsWith('.lock')) continue;
      const path = join(dir, name);
      if (fs.statSync(path).isDirectory()) walk(path, `${rel}${name}/`);
      else out.set(`${rel}${name}`, fs.readFileSync(path, 'latin1'));
    }
  };
  walk(where, '');
  return out;
}
