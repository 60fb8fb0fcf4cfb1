// Which journal just changed, as soon as any process commits to it: on a data directory a watch of the directory
// (inotify) and, as the cheap fallback where that says nothing (a directory made later, a network filesystem),
// a stat of each journal file twice a second; on PostgreSQL the writers' NOTIFY (pg-reader.ts).
import { watch, watchFile, unwatchFile, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

export type ChangeListener = (journal: string) => void;

export interface Live {
  subscribe(listener: ChangeListener): () => void;
  close(): void;
}

const POLL_MS = 500;
/** One notice per journal per burst of writes (a put touches the journal, then its cache). */
const COALESCE_MS = 50;

/** Fans one source of changes out to the listeners, each journal's burst of changes told once. */
export function fanOut(): Live & { tell: ChangeListener } {
  const listeners = new Set<ChangeListener>();
  const pending = new Map<string, NodeJS.Timeout>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    tell(journal) {
      if (pending.has(journal)) return;
      pending.set(
        journal,
        setTimeout(() => {
          pending.delete(journal);
          for (const listener of listeners) listener(journal);
        }, COALESCE_MS),
      );
    },
    close() {
      for (const timer of pending.values()) clearTimeout(timer);
      pending.clear();
      listeners.clear();
    },
  };
}

/** Changes to the journals `files` of the data directory `dir` (which may not exist yet). */
export function watchDataDir(dir: string, files: readonly string[]): Live {
  const out = fanOut();
  const journalOf = (file: string | null) => (file !== null && files.includes(file) ? file.replace(/\.jsonl$/, '') : undefined);
  let watcher: FSWatcher | undefined;
  const startWatch = () => {
    if (watcher !== undefined) return;
    try {
      watcher = watch(dir, { persistent: false }, (_event, file) => {
        const journal = journalOf(file === null ? null : String(file));
        if (journal !== undefined) out.tell(journal);
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  };
  startWatch();
  // A directory made after the dashboard started: watched once it is there, and everything in it is news.
  const retry = setInterval(() => {
    if (watcher !== undefined) return;
    startWatch();
    if (watcher !== undefined) for (const file of files) out.tell(journalOf(file)!);
  }, POLL_MS * 2);
  retry.unref();
  const polled = files.map((file) => {
    const path = join(dir, file);
    const onStat = (now: { mtimeMs: number; size: number; ino: number }, before: { mtimeMs: number; size: number; ino: number }) => {
      if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
      startWatch();
      out.tell(journalOf(file)!);
    };
    watchFile(path, { interval: POLL_MS, persistent: false }, onStat);
    return { path, onStat };
  });
  return {
    subscribe: out.subscribe,
    close() {
      clearInterval(retry);
      watcher?.close();
      for (const p of polled) unwatchFile(p.path, p.onStat);
      out.close();
    },
  };
}
