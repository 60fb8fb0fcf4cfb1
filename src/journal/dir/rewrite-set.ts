// A rewrite of many files of a data directory at once (core/line-store.ts, StagedRewrite: `journal redact`,
// `encrypt`, `rekey`): journals, history/ files and quarantine/ items, all or nothing under kill -9.
//
// Each new file is written whole and fsynced beside the one it replaces, under a name no reader takes
// (`.<name>.staged-<pid>.tmp`). Then a plan naming every move (and the journals whose cache/ files go) is written
// and renamed into place: that rename is the commit point. The moves follow (journals last), the cache/ files of
// each journal go, and the plan is removed. A crash before the plan's rename leaves the old store (the staged
// files are removed by the next holder of the lock); a crash after it is rolled forward by the next holder of the
// lock (finishRewrite, from DataDir's lock): the new store. A reader without the lock that runs between the crash
// and that holder may see some pieces new and others old; `journal check` takes the lock and so never does.
import { fs } from '../../shared/fs';
import { basename, dirname, join, relative } from 'node:path';
import { asStorageError, fsyncDir, ownershipOf, pathExists, writeNewFileDurable } from '../../shared/durable-fs';
import { crashPoint } from '../../shared/crash-point';
import { noteCommit } from '../../shared/commit-log';
import { CACHE_DIR } from '../derived';
import type { StoreSpec } from '../codec/store-spec';
import type { HistoryGeneration, QuarantineItem, StagedRewrite } from '../core/line-store';
import { HISTORY_DIR } from './history';
import type { HeldLock } from './lock/lock';
import { QUARANTINE_DIR } from './quarantine';

const PLAN = '.rewrite-plan.json';
/** Present while files are staged and not yet committed: what tells the next holder of the lock to look for them. */
const STAGING = '.rewrite-staging';
const STAGED = /^\..+\.staged-\d+\.tmp$/;

interface Plan {
  /** [staged, target], relative to the root: journals last. */
  readonly moves: [string, string][];
  /** Journals whose cache/ files go. */
  readonly journals: string[];
  readonly note: string;
}

const stagedName = (target: string) => join(dirname(target), `.${basename(target)}.staged-${process.pid}.tmp`);

export class DirRewriteSet implements StagedRewrite {
  private readonly moves: [string, string][] = [];
  private readonly journals: string[] = [];
  private committed = false;

  private constructor(private readonly root: string) {}

  /** A rewrite begun: the marker that says files may be staged is made durable first. */
  static begin(root: string): DirRewriteSet {
    const marker = join(root, STAGING);
    try {
      fs.writeFileSync(marker, '');
      fsyncDir(root);
    } catch (error) {
      throw asStorageError(error, marker);
    }
    return new DirRewriteSet(root);
  }

  private async put(target: string, bytes: Uint8Array | string): Promise<void> {
    const staged = stagedName(target);
    const path = join(this.root, staged);
    try {
      fs.rmSync(path, { force: true });
      writeNewFileDurable(path, bytes, { like: ownershipOf(join(this.root, target)) });
    } catch (error) {
      throw asStorageError(error, path);
    }
    this.moves.push([staged, target]);
  }

  async journal(spec: StoreSpec<unknown>, text: string): Promise<void> {
    await this.put(spec.file, text);
    this.journals.push(spec.file);
  }

  async history(_file: string, piece: HistoryGeneration, text: string): Promise<void> {
    await this.put(relative(this.root, piece.id), text);
  }

  async quarantine(item: QuarantineItem, bytes: Uint8Array): Promise<void> {
    await this.put(item.name, bytes);
  }

  async commit(note: string): Promise<void> {
    // Journals move last: until they do, every reader takes the old journal whole.
    const moves = [...this.moves.filter(([, t]) => !this.journals.includes(t)), ...this.moves.filter(([, t]) => this.journals.includes(t))];
    const plan: Plan = { moves, journals: this.journals, note };
    for (const dir of new Set(moves.map(([s]) => dirname(join(this.root, s))))) fsyncDir(dir);
    crashPoint('rewrite-set:staged');
    const temp = join(this.root, `${PLAN}.${process.pid}.tmp`);
    try {
      fs.rmSync(temp, { force: true });
      writeNewFileDurable(temp, JSON.stringify(plan));
      fs.renameSync(temp, join(this.root, PLAN));
      fsyncDir(this.root);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw asStorageError(error, join(this.root, PLAN));
    }
    this.committed = true;
    fs.rmSync(join(this.root, STAGING), { force: true });
    crashPoint('rewrite-set:committed');
    applyPlan(this.root, plan);
    noteCommit(`${this.journals.join(', ') || QUARANTINE_DIR} ${note}`);
  }

  async abort(): Promise<void> {
    if (this.committed) return;
    for (const [staged] of this.moves.splice(0)) fs.rmSync(join(this.root, staged), { force: true });
    fs.rmSync(join(this.root, STAGING), { force: true });
  }
}

/** The moves of a committed plan (those a crash left undone), the cache/ files of its journals removed, then the plan. */
function applyPlan(root: string, plan: Plan): void {
  try {
    for (const [staged, target] of plan.moves) {
      if (!pathExists(join(root, staged))) continue; // moved before a crash
      fs.renameSync(join(root, staged), join(root, target));
      crashPoint('rewrite-set:moved');
    }
    for (const dir of new Set(plan.moves.map(([, t]) => dirname(join(root, t))))) fsyncDir(dir);
    dropCache(root, plan.journals);
    crashPoint('rewrite-set:applied');
    fs.rmSync(join(root, PLAN));
    fsyncDir(root);
  } catch (error) {
    throw asStorageError(error, join(root, PLAN));
  }
}

/** Every cache/ file of the journals `files` (they describe the old journals, old text and all). */
function dropCache(root: string, files: readonly string[]): void {
  let names: string[];
  try {
    names = fs.readdirSync(join(root, CACHE_DIR));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names) if (files.some((f) => name.startsWith(`${f}.`))) fs.rmSync(join(root, CACHE_DIR, name), { force: true, recursive: true });
  fsyncDir(join(root, CACHE_DIR));
}

/**
 * Just after the lock is taken (`held`), before anything else: a rewrite a crash cut short is finished (its plan
 * was committed) or its staged files are removed (it was not). The lock is released if that fails.
 */
export async function finishRewrite(root: string, held: HeldLock): Promise<HeldLock> {
  const planPath = join(root, PLAN);
  try {
    let text: string | undefined;
    try {
      text = fs.readFileSync(planPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw asStorageError(error, planPath);
    }
    if (text !== undefined) applyPlan(root, JSON.parse(text) as Plan);
    if (pathExists(join(root, STAGING))) {
      removeStaged(root);
      fs.rmSync(join(root, STAGING), { force: true });
      fsyncDir(root);
    }
  } catch (error) {
    await held.release();
    throw error;
  }
  return held;
}

/** Staged files no committed plan names (a rewrite that crashed before its commit point), and plan temps. */
function removeStaged(root: string): void {
  for (const dir of [root, join(root, HISTORY_DIR), join(root, QUARANTINE_DIR)]) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    const stale = names.filter((n) => STAGED.test(n) || (dir === root && n.startsWith(`${PLAN}.`)));
    for (const name of stale) fs.rmSync(join(dir, name), { force: true });
    if (stale.length > 0) fsyncDir(dir);
  }
}
