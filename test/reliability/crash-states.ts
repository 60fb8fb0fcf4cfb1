// Crash states beyond kill -9, in the spirit of ALICE (Pillai et al., OSDI 2014): from an strace of one crux
// command, every state a power cut may leave on disk under a weak persistence model, materialised as a
// directory to check.
//
// The model (POSIX without ext4's courtesies): a write or truncate reaches the disk only once its file is
// fsynced; a directory operation (create, mkdir, link, rename, unlink) only once its directory is fsynced.
// Until then each may be lost, kept, or (a write) kept in part, independently of the others: so unsynced
// operations are reordered, and a rename may reach the disk before or after the data of the file it renames.
// For each crash point (after each traced operation) the states built are: everything kept; every unsynced
// operation lost; each unsynced operation lost alone (the rest kept); each unsynced write torn in half; unsynced
// directory operations lost with the data kept, and unsynced data lost with the directory operations kept.
// The lock directory is left out: after a power cut every holder is dead (crux-journal(5), THE LOCK).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Syscall } from './strace';

/** The calls the model needs; any other call on a file of the data directory is an error (unmodelled). */
export const TRACED =
  'openat,write,pwrite64,writev,pwritev,ftruncate,truncate,fsync,fdatasync,rename,renameat,renameat2,link,linkat,unlink,unlinkat,mkdir,mkdirat,rmdir,close,lseek,copy_file_range,sendfile';

type Op =
  | { k: 'create'; path: string; ino: number; parent: number }
  | { k: 'mkdir'; path: string; ino: number; parent: number }
  | { k: 'link'; from: string; to: string; parent: number }
  | { k: 'rename'; from: string; to: string; parents: number[] }
  | { k: 'unlink'; path: string; parent: number }
  | { k: 'write'; ino: number; off: number; data: Buffer }
  | { k: 'trunc'; ino: number; len: number }
  | { k: 'fsync'; ino: number }
  | { k: 'ack' };

interface Model {
  /** Path (relative to the data directory, '' for itself) → inode. */
  paths: Map<string, number>;
  data: Map<number, Buffer>;
  dirs: Set<number>;
}

const cloneModel = (m: Model): Model => ({ paths: new Map(m.paths), data: new Map([...m.data].map(([k, v]) => [k, Buffer.from(v)])), dirs: new Set(m.dirs) });

/** The data directory as it is on disk now (taken as durable: it was written before the traced command). */
export function readModel(root: string): Model {
  const model: Model = { paths: new Map([['', 0]]), data: new Map(), dirs: new Set([0]) };
  let next = 1;
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      const rel = relative(root, p);
      if (rel === '.lock') continue;
      const ino = next++;
      model.paths.set(rel, ino);
      if (entry.isDirectory()) {
        model.dirs.add(ino);
        walk(p);
      } else model.data.set(ino, fs.readFileSync(p));
    }
  };
  // A data directory that does not exist yet (a first write) is taken as created durably: its parent's fsync
  // is not in the trace's scope, everything in it is.
  if (fs.existsSync(root)) walk(root);
  return model;
}

const hexString = (text: string): Buffer => Buffer.from(text.replace(/\\x/g, ''), 'hex');
const strings = (args: string) => [...args.matchAll(/"((?:\\x[0-9a-f]{2})*)"/g)].map((m) => hexString(m[1]!));

/** Turns the main thread's calls (strace -xx) into operations on the data directory's files. */
export function toOps(calls: readonly Syscall[], main: number, root: string, start: Model): Op[] {
  const model = cloneModel(start);
  let next = Math.max(0, ...model.paths.values()) + 1;
  const fds = new Map<number, { ino: number; pos: number; append: boolean }>();
  const ops: Op[] = [];
  const rel = (path: string): string | undefined => {
    const r = relative(root, path);
    if (r.startsWith('..') || r === '.lock' || r.startsWith('.lock/')) return undefined;
    return r;
  };
  const parentOf = (r: string) => model.paths.get(dirname(r) === '.' ? '' : dirname(r)) ?? -1;
  const push = (op: Op) => {
    ops.push(op);
    apply(model, op, false);
  };
  for (const c of calls) {
    if (c.pid !== main || c.result < 0) continue;
    const fd = Number(/^(-?\d+)/.exec(c.args)?.[1]);
    if ((c.name === 'write' || c.name === 'pwrite64') && fd === 1) {
      ops.push({ k: 'ack' });
      continue;
    }
    const path = strings(c.args)[0]?.toString('utf8');
    switch (c.name) {
      case 'openat': {
        const r = path === undefined ? undefined : rel(path);
        if (r === undefined) break;
        let ino = model.paths.get(r);
        if (ino === undefined) {
          if (!/O_CREAT/.test(c.args)) break;
          ino = next++;
          push({ k: 'create', path: r, ino, parent: parentOf(r) });
        } else if (/O_TRUNC/.test(c.args) && !model.dirs.has(ino)) push({ k: 'trunc', ino, len: 0 });
        fds.set(c.result, { ino, pos: 0, append: /O_APPEND/.test(c.args) });
        break;
      }
      case 'mkdir':
      case 'mkdirat': {
        const r = path === undefined ? undefined : rel(path);
        if (r !== undefined && r !== '') push({ k: 'mkdir', path: r, ino: next++, parent: parentOf(r) });
        break;
      }
      case 'rename':
      case 'renameat':
      case 'renameat2':
      case 'link':
      case 'linkat': {
        const [from, to] = strings(c.args).map((b) => rel(b.toString('utf8')));
        if (from === undefined || to === undefined) {
          if ((from === undefined) !== (to === undefined)) throw new Error(`unmodelled: ${c.text.slice(0, 200)}`);
          break;
        }
        if (c.name.startsWith('link')) push({ k: 'link', from, to, parent: parentOf(to) });
        else push({ k: 'rename', from, to, parents: [parentOf(from), parentOf(to)] });
        break;
      }
      case 'unlink':
      case 'unlinkat':
      case 'rmdir': {
        const r = path === undefined ? undefined : rel(path);
        if (r !== undefined) push({ k: 'unlink', path: r, parent: parentOf(r) });
        break;
      }
      case 'close':
        fds.delete(fd);
        break;
      default: {
        const open = fds.get(fd);
        if (open === undefined) break;
        if (c.name === 'write' || c.name === 'pwrite64') {
          const data = strings(c.args)[0]!.subarray(0, c.result);
          const positional = c.name === 'pwrite64';
          const off = positional ? Number(/,\s*(\d+)$/.exec(c.args)![1]) : open.append ? model.data.get(open.ino)!.length : open.pos;
          push({ k: 'write', ino: open.ino, off, data });
          if (!positional) open.pos = off + data.length;
        } else if (c.name === 'ftruncate') push({ k: 'trunc', ino: open.ino, len: Number(/,\s*(\d+)$/.exec(c.args)![1]) });
        else if (c.name === 'fsync' || c.name === 'fdatasync') ops.push({ k: 'fsync', ino: open.ino });
        else if (c.name === 'lseek') open.pos = c.result;
        else throw new Error(`unmodelled call on a data-directory file: ${c.text.slice(0, 200)}`);
      }
    }
  }
  return ops;
}

function apply(model: Model, op: Op, torn: boolean): void {
  switch (op.k) {
    case 'create':
      if (!model.paths.has(op.path)) model.paths.set(op.path, op.ino);
      if (!model.data.has(op.ino)) model.data.set(op.ino, Buffer.alloc(0));
      return;
    case 'mkdir':
      if (!model.paths.has(op.path)) model.paths.set(op.path, op.ino);
      model.dirs.add(op.ino);
      return;
    case 'link': {
      const ino = model.paths.get(op.from);
      if (ino !== undefined && !model.paths.has(op.to)) model.paths.set(op.to, ino);
      return;
    }
    case 'rename': {
      const ino = model.paths.get(op.from);
      if (ino === undefined) return;
      if (model.dirs.has(ino)) {
        for (const [p, i] of [...model.paths]) {
          if (p.startsWith(`${op.from}/`)) {
            model.paths.delete(p);
            model.paths.set(op.to + p.slice(op.from.length), i);
          }
        }
      }
      model.paths.delete(op.from);
      model.paths.set(op.to, ino);
      return;
    }
    case 'unlink':
      model.paths.delete(op.path);
      return;
    case 'write': {
      const data = torn ? op.data.subarray(0, Math.floor(op.data.length / 2)) : op.data;
      let buf = model.data.get(op.ino) ?? Buffer.alloc(0);
      if (buf.length < op.off + data.length) buf = Buffer.concat([buf, Buffer.alloc(op.off + data.length - buf.length)]);
      data.copy(buf, op.off);
      model.data.set(op.ino, buf);
      return;
    }
    case 'trunc': {
      const buf = model.data.get(op.ino) ?? Buffer.alloc(0);
      model.data.set(op.ino, buf.length >= op.len ? buf.subarray(0, op.len) : Buffer.concat([buf, Buffer.alloc(op.len - buf.length)]));
      return;
    }
    default:
  }
}

const isData = (op: Op) => op.k === 'write' || op.k === 'trunc';
const isDir = (op: Op) => op.k === 'create' || op.k === 'mkdir' || op.k === 'link' || op.k === 'rename' || op.k === 'unlink';

/** Whether op i is on disk for sure at crash point c (an fsync of its file, or of its directory, came after it). */
function durable(ops: readonly Op[], i: number, c: number): boolean {
  const op = ops[i]!;
  const covers = (ino: number) => ops.slice(i + 1, c).some((o) => o.k === 'fsync' && o.ino === ino);
  if (op.k === 'write' || op.k === 'trunc') return covers(op.ino);
  if (op.k === 'rename') return op.parents.some(covers);
  if (op.k === 'create' || op.k === 'mkdir' || op.k === 'link' || op.k === 'unlink') return covers(op.parent);
  return true;
}

export interface CrashState {
  /** Operations before the crash. */
  readonly at: number;
  readonly variant: string;
  /** Whether the command had printed its success before the crash. */
  readonly acked: boolean;
  readonly model: Model;
}

/** Every crash state of the model (deduplicated by content). */
export function crashStates(start: Model, ops: readonly Op[]): CrashState[] {
  const seen = new Set<string>();
  const states: CrashState[] = [];
  for (let c = 0; c <= ops.length; c++) {
    const acked = ops.slice(0, c).some((o) => o.k === 'ack');
    const loose = ops.slice(0, c).flatMap((o, i) => ((isData(o) || isDir(o)) && !durable(ops, i, c) ? [i] : []));
    const variants: [string, (i: number) => 'keep' | 'drop' | 'tear'][] = [
      ['all kept', () => 'keep'],
      ['unsynced lost', (i) => (loose.includes(i) ? 'drop' : 'keep')],
      ['unsynced directory operations lost, data kept', (i) => (loose.includes(i) && isDir(ops[i]!) ? 'drop' : 'keep')],
      ['unsynced data lost, directory operations kept', (i) => (loose.includes(i) && isData(ops[i]!) ? 'drop' : 'keep')],
      ...loose.map((u): [string, (i: number) => 'keep' | 'drop' | 'tear'] => [`only op ${u} (${ops[u]!.k}) lost`, (i) => (i === u ? 'drop' : 'keep')]),
      ...loose
        .filter((u) => ops[u]!.k === 'write' && (ops[u] as { data: Buffer }).data.length > 1)
        .map((u): [string, (i: number) => 'keep' | 'drop' | 'tear'] => [`op ${u} (write) torn`, (i) => (i === u ? 'tear' : 'keep')]),
    ];
    for (const [variant, choose] of variants) {
      const model = cloneModel(start);
      for (let i = 0; i < c; i++) {
        const choice = choose(i);
        if (choice !== 'drop') apply(model, ops[i]!, choice === 'tear');
      }
      const key = fingerprint(model, acked);
      if (seen.has(key)) continue;
      seen.add(key);
      states.push({ at: c, variant, acked, model });
    }
  }
  return states;
}

function fingerprint(model: Model, acked: boolean): string {
  const hash = createHash('sha256').update(String(acked));
  for (const [p, ino] of [...model.paths].sort(([a], [b]) => (a < b ? -1 : 1))) {
    hash.update(`\0${p}\0`);
    hash.update(model.dirs.has(ino) ? 'dir' : (model.data.get(ino) ?? Buffer.alloc(0)));
  }
  return hash.digest('hex');
}

/** Writes a state out as a data directory at `dir`. */
export function materialise(model: Model, dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const entries = [...model.paths].filter(([p]) => p !== '').sort(([a], [b]) => a.split('/').length - b.split('/').length);
  for (const [p, ino] of entries) {
    const target = join(dir, p);
    if (!fs.existsSync(dirname(target))) continue; // its directory entry was lost
    if (model.dirs.has(ino)) fs.mkdirSync(target, { mode: 0o700 });
    else fs.writeFileSync(target, model.data.get(ino) ?? Buffer.alloc(0), { mode: 0o600 });
  }
}

export type { Model, Op };
