// Running the built bin/crux in tests: a fresh data dir per test, results as exit code + stdout + stderr.
import { execa, type Options } from 'execa';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'vitest';
import { freshStoreUrl, pgAvailable, pgSkipReason, psql, psqlScript } from './pg';

export const CRUX = resolve(__dirname, '../../bin/crux');
/** The script bin/crux links to (build.mjs): what crux names itself by where it follows links (`crux mcp install`). */
export const CRUX_SCRIPT = resolve(__dirname, '../../bin/crux.cjs');
/** A hook command as `crux hook install` writes it: this Node and crux's script by absolute path, then `rest`. */
export const hookCommand = (rest: string): string => `${process.execPath} ${CRUX_SCRIPT} ${rest}`;

/** The environment every test process gets: no CA bundle (it costs ~42 ms a start), no inherited crux settings. */
export function testEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('CRUX_') || key === 'NODE_EXTRA_CA_CERTS' || key === 'NO_COLOR') delete env[key];
  return { ...env, ...extra };
}

export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A new directory for a test, under this run's directory (temp-root.ts: removed when the run ends). */
export function tempDir(prefix = 'crux-test-'): string {
  return mkdtempSync(join(process.env.CRUX_TEST_TMP || tmpdir(), prefix));
}

/** A fresh, not yet existing data directory inside a new temp dir. */
export function freshDataDir(): string {
  return join(tempDir(), 'data');
}

/**
 * `npm run test:stress` sets CRUX_STRESS=1 (CI runs it after `npm test`): what the default run leaves out — the
 * PostgreSQL half of the parameterized end-to-end suites, the soak's further cases, the full property runs — the
 * heavy variants, and the wall-clock bounds that hold only on a quiet machine (everywhere else a test asserts the
 * order of events, and records times as figures). docs/testing.md.
 */
export const STRESS = (process.env.CRUX_STRESS ?? '') !== '' && process.env.CRUX_STRESS !== '0';

/**
 * CI's run (`CRUX_TEST_FULL=1`, `.ci/run`), and the stress run: every parameterized suite over both engines and the
 * real agent clients, which a developer's default run leaves out; not the stress run's heavy variants and scales.
 */
export const FULL = STRESS || ((process.env.CRUX_TEST_FULL ?? '') !== '' && process.env.CRUX_TEST_FULL !== '0');

/** Why a stress-only test is skipped in this run, or undefined when it runs (`it.skipIf(STRESS_ONLY !== undefined)`). */
export const STRESS_ONLY: string | undefined = STRESS ? undefined : 'in npm run test:stress';

/** `it`, in `npm run test:stress` only (CRUX_STRESS): a further case of a guarantee the default run covers once. */
export const stressIt = it.skipIf(!STRESS);

/** A property test's runs: a quarter of `full` (at least one) by default, all of them under CRUX_STRESS. */
export const propertyRuns = (full: number): number => (STRESS ? full : Math.max(1, Math.ceil(full / 4)));

export type StoreKind = 'dir' | 'pg';
/**
 * Both engines, PostgreSQL when a server is at hand: what the store contract (unit/journal/conformance*.test.ts)
 * runs over in every run.
 */
export const ENGINES: StoreKind[] = pgAvailable() ? ['dir', 'pg'] : ['dir'];
/**
 * The kinds of store the other parameterized suites run over: a data directory; PostgreSQL too under CRUX_STRESS
 * (the contract holds both engines to the same answers in every run; a command's PostgreSQL half costs a process
 * twice a data directory's and a schema).
 */
export const STORE_KINDS: StoreKind[] = FULL ? ENGINES : ['dir'];

/**
 * `describe.each` over both kinds of store (`%s` in the title names the kind). The PostgreSQL suite runs under
 * CRUX_STRESS with a server at hand; otherwise it is not dropped from the count: it shows as skipped, with the
 * reason in its title.
 */
export function describeEachStore(title: string, suite: (kind: StoreKind) => void): void {
  for (const kind of ['dir', 'pg'] as const) {
    const reason = kind === 'pg' ? (pgSkipReason() ?? (FULL ? undefined : 'in CI and npm run test:stress')) : undefined;
    const name = title.replace('%s', kind);
    if (reason === undefined) describe(name, () => suite(kind));
    else describe.skip(`${name} (skipped: ${reason})`, () => suite(kind));
  }
}

/** A fresh, empty store of that kind: a data directory's path that does not exist yet, or a URL naming a new schema. */
export const freshStore = (kind: StoreKind): string => (kind === 'pg' ? freshStoreUrl() : freshDataDir());

const isStoreUrl = (store: string) => store.startsWith('postgres://') || store.startsWith('postgresql://');

/** How the command line names a store: --store for a URL, --data-dir for a path. */
export const storeArgs = (store: string): string[] => (isStoreUrl(store) ? ['--store', store] : ['--data-dir', store]);

/** Every line of a journal as stored (the file's lines, or the table's rows in order). */
export function journalLines(store: string, file: string): string[] {
  if (isStoreUrl(store)) {
    const schema = new URL(store).searchParams.get('schema') ?? 'crux';
    const table = `journal_${file.replace(/\.jsonl$/, '')}`;
    // The store's own server (a suite may run a cluster of its own).
    const exists = psql(`select count(*) from pg_tables where schemaname = '${schema}' and tablename = '${table}'`, store).trim() === '1';
    return exists ? psql(`select body from "${schema}".${table} order by line`, store).split('\n').filter(Boolean) : [];
  }
  const path = join(store, file);
  return fs.existsSync(path) ? fs.readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

/** Whether the store exists yet (a directory, or a schema): reads must not create it. */
export function storeExists(store: string): boolean {
  if (!isStoreUrl(store)) return fs.existsSync(store);
  const schema = new URL(store).searchParams.get('schema') ?? 'crux';
  return psql(`select count(*) from pg_namespace where nspname = '${schema}'`, store).trim() === '1';
}

/** The parsed records of a journal. */
export const journalRecords = (store: string, file: string): any[] => journalLines(store, file).map((l) => JSON.parse(l));

export async function crux(store: string, args: string[], opts: Options & { env?: Record<string, string | undefined> } = {}): Promise<Run> {
  const result = await execa(CRUX, [...storeArgs(store), ...args], {
    reject: false,
    stripFinalNewline: false,
    ...opts,
    env: testEnv(opts.env),
    extendEnv: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/**
 * Every file under `dir` with its mode and content hash (or, for a PostgreSQL store, every table of its schema
 * with a hash of its rows): compare two snapshots to prove nothing changed. The lock directory's contents
 * (.lock/: sockets and holder files, which come and go with each writer) are the lock's own state, not data:
 * only the directory itself is recorded.
 */
export function snapshotDir(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (isStoreUrl(dir)) {
    const schema = new URL(dir).searchParams.get('schema') ?? 'crux';
    // One psql for the whole schema: the query that hashes each table is generated and run by \gexec.
    const script = `select format('select %L, md5(coalesce(string_agg(r::text, E''\\n'' order by r::text), '''')) from %I.%I r', tablename, schemaname, tablename)
      from pg_tables where schemaname = '${schema}' order by tablename \\gexec\n`;
    for (const line of psqlScript(script).split('\n').filter(Boolean)) {
      const [table, sum] = line.split('|');
      out[table!] = sum!;
    }
    return out;
  }
  if (!fs.existsSync(dir)) return out;
  const walk = (d: string) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      const st = fs.statSync(p);
      const mode = (st.mode & 0o777).toString(8);
      if (entry.isDirectory()) {
        out[`${relative(dir, p)}/`] = mode;
        if (!(d === dir && entry.name === '.lock')) walk(p);
      } else {
        out[relative(dir, p)] = `${mode} ${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** The flag of Node's permission model: Node 20 names it --experimental-permission, 22 and later --permission. */
export const PERMISSION_FLAG = Number(process.versions.node.split('.')[0]) >= 22 ? '--permission' : '--experimental-permission';
