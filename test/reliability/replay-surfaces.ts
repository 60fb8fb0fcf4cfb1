// The reads of reads-equal-replay.property.test.ts that other surfaces make (issue 53 item 8): the read-only MCP
// tools (through the server in-process, over the SDK's in-memory transport: warnings in structuredContent) and the
// `crux ui` API routes (api.ts's `answer`: warnings in the body), each server's stderr caught in memory. What
// every read answers: its document, what it said on stderr, and its `warnings`.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { contextOf, takePassedOver, type Context } from '../../src/cli/context';
import { failed } from '../../src/cli/outcome';
import { TOOLS } from '../../src/cli/mcp/tools';
import * as sdk from '../../src/cli/mcp/sdk';
import { createServer } from '../../src/cli/mcp/server';
import { answer as apiAnswer } from '../../src/cli/ui/api';
import { openPgReader } from '../../src/journal/pg/pg-reader';
import * as caseOps from '../../src/cli/operations/case';
import { redirectStdio } from '../../src/output/stdout';
import type { JournalWarning } from '../../src/output/emit';
import { CruxError } from '../../src/shared/errors';

export const JOURNALS = ['sessions.jsonl', 'cases.jsonl'] as const;

/** One read as a surface makes it, and the journal it reads. */
export interface Read {
  readonly name: string;
  readonly file: (typeof JOURNALS)[number];
  /** The other journal it reads, whose problems it may report too (the activity chart reads both). */
  readonly also?: (typeof JOURNALS)[number];
  /** Whether a replay of it reports every problem check finds: not `journal check`, whose problems are its document, not warnings. */
  readonly whole?: false;
  /** Through the operations, with a Context of its own (the CLI's reads and the MCP tools). */
  readonly run?: (ctx: Context) => Promise<unknown>;
  /** A `crux ui` API path, with its query: the route builds its contexts itself. */
  readonly api?: string;
  /** An MCP tool call, through the server (in-memory transport): it builds its context itself. */
  readonly mcp?: { readonly name: string; readonly args: Record<string, unknown> };
}

export interface Answered {
  readonly out: unknown;
  readonly stderr: string[];
  readonly warnings: readonly JournalWarning[];
}

/** What legitimately differs between a store and its copy: where it is, and how long a replay took. */
const UNSTEADY = new Set(['data_dir', 'replay_ms']);
const steady = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(steady)
    : typeof value === 'object' && value !== null
      ? Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (UNSTEADY.has(k) ? [] : [[k, steady(v)]])))
      : value;

/** A read's answer (or refusal), what it said on stderr, and its --json `warnings`. */
export async function answer(root: string, agent: string | undefined, now: number, read: Read): Promise<Answered> {
  const answered = await (read.api !== undefined
    ? apiRead(root, agent, now, read.api)
    : read.mcp !== undefined
      ? mcpRead(root, agent, now, read.mcp)
      : run(root, agent, now, read));
  return { ...answered, out: steady(answered.out) };
}

/**
 * A CLI read in-process, with `--json`: its answer and the warnings its document carries; refused, the error
 * document the program writes on stderr (outcome.ts, from what the command passed over: context.ts).
 */
async function run(root: string, agent: string | undefined, now: number, read: Read): Promise<Answered> {
  const stderr: string[] = [];
  takePassedOver();
  // A data directory's path, or a PostgreSQL store's URL (reads-equal-replay-pg).
  const where = /^postgres(ql)?:/.test(root) ? { store: root } : { dataDir: root };
  const ctx = contextOf({ ...where, agent, now: new Date(now).toISOString(), json: true }, {}, (text) => stderr.push(text));
  try {
    return { out: await read.run!(ctx), stderr, warnings: [...ctx.warnings] };
  } catch (error) {
    if (!(error instanceof CruxError)) throw error;
    const document = await caught(async (written) => {
      failed(error, true, takePassedOver());
      return JSON.parse(written.join('')) as { warnings?: JournalWarning[] };
    });
    return { out: { error: error.kind, hint: error.hint }, stderr, warnings: document.warnings ?? [] };
  }
}

/** Runs `fn` with the program's stderr in memory (what a server's contexts write there). */
async function caught<T>(fn: (stderr: string[]) => Promise<T>): Promise<T> {
  const stderr: string[] = [];
  redirectStdio({ stdout: () => {}, stderr: (bytes) => stderr.push(Buffer.from(bytes).toString()), stdin: new Uint8Array() });
  try {
    return await fn(stderr);
  } finally {
    redirectStdio(undefined);
  }
}

/** An API request as `crux ui` answers it: the status and body, the body's warnings apart, stderr in memory. */
function apiRead(root: string, agent: string | undefined, now: number, path: string): Promise<Answered> {
  const url = new URL(path, 'http://ui');
  const parts = url.pathname.split('/').slice(2).map(decodeURIComponent);
  return caught(async (stderr) => {
    const pg = /^postgres(ql)?:/.test(root);
    const where = pg ? { store: root } : { dataDir: root };
    // On PostgreSQL, the dashboard's own connection too (server.ts): what the activity chart reads backwards by.
    const reader = pg ? openPgReader(root, 'the store') : undefined;
    const scope = { globals: { ...where, agent, now: new Date(now).toISOString() }, env: {}, pg: reader };
    const { status, body } = await apiAnswer(scope, parts, url.searchParams).finally(() => reader?.close());
    // A refusal's body carries the `warnings` of what the request passed over on its way, as an answer's does.
    const { warnings = [], ...document } = JSON.parse(body) as { warnings?: JournalWarning[] };
    return { out: { status, document }, stderr, warnings };
  });
}

/**
 * A tool call as `crux mcp` answers it (its server in-process, over the SDK's in-memory transport): the
 * structuredContent, its warnings apart (a refusal's too), and the text — journal_check's text is its document's,
 * with the store's path and timings in it.
 */
function mcpRead(root: string, agent: string | undefined, now: number, call: NonNullable<Read['mcp']>): Promise<Answered> {
  return caught(async (stderr) => {
    const { server } = createServer(sdk, { dataDir: root, agent, now: new Date(now).toISOString() }, 'test');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'reads-equal-replay', version: '1' });
    await client.connect(clientSide);
    try {
      const result = await client.callTool({ name: call.name, arguments: call.args });
      const { warnings = [], ...structured } = (result.structuredContent ?? {}) as { warnings?: JournalWarning[] };
      const refused = result.isError === true;
      // The text ends with the warnings' lines (but a state's exact bytes; a refusal's too): said apart, one a warning, since a
      // read of the cached store may pass over less than the replay.
      const lines = (result.content as { text: string }[])[0]!.text.split('\n');
      const told = lines.filter((line) => /^warning: .* \(passed over; journal_check shows every problem\)$/.test(line));
      const exact = !refused && TOOLS.find((t) => t.name === call.name)!.exactText === true;
      if (told.length !== (exact ? 0 : warnings.length)) throw new Error(`${call.name}: its text tells ${told.length} of ${warnings.length} warnings`);
      const text = call.name === 'journal_check' ? undefined : lines.filter((line) => !told.includes(line)).join('\n');
      return { out: { refused, structured, text }, stderr, warnings };
    } finally {
      await client.close();
    }
  });
}

/** A read-only MCP tool called with `args` (case_retrieve without mark_reused writes nothing). */
const mcp = (name: string, args: Record<string, unknown>, file: Read['file'], whole?: false): Read => {
  const tool = TOOLS.find((t) => t.name === name)!;
  if (!tool.readOnly && name !== 'case_retrieve') throw new Error(`${name} writes`);
  return { name: `mcp ${name} ${JSON.stringify(args)}`, file, mcp: { name, args }, ...(whole === false ? { whole } : {}) };
};

const api = (path: string, file: Read['file'], whole?: false): Read => ({ name: `ui ${path}`, file, api: path, ...(whole === false ? { whole } : {}) });

export const SURFACE_READS: Read[] = [
  ...[0, 2, 4].flatMap((i) => [
    mcp('session_get', { session_id: `s${i}` }, 'sessions.jsonl'),
    mcp('session_history', { session_id: `s${i}` }, 'sessions.jsonl'),
    mcp('session_history', { session_id: `s${i}`, limit: 1 }, 'sessions.jsonl'),
  ]),
  ...[{}, { all: true }, { archived: true }, { stranded: true }, { all: true, limit: 2 }].map((args) => mcp('session_list', args, 'sessions.jsonl')),
  mcp('case_list', {}, 'cases.jsonl'),
  mcp('case_list', { only_failure: true, limit: 2 }, 'cases.jsonl'),
  // Not marking them reused: a read.
  mcp('case_retrieve', { task: 'deploy cache', top_k: 3 }, 'cases.jsonl'),
  mcp('case_retrieve', { task: 'timeout page', only_success: true }, 'cases.jsonl'),
  mcp('journal_check', {}, 'sessions.jsonl', false),
  ...['/api/sessions', '/api/sessions?all=1', '/api/sessions?agent=a&archived=1', '/api/sessions?stranded=1&limit=2', '/api/sessions?all_agents=0'].map(
    (path) => api(path, 'sessions.jsonl'),
  ),
  ...[
    '/api/sessions?status=closed&limit=2',
    '/api/sessions?archived=1&limit=1&all_agents=0',
    '/api/sessions?status=archived&status=active&limit=3&offset=1',
  ].map((path) => api(path, 'sessions.jsonl')),
  ...['-/s0', 'a/s1', 'b/s3'].flatMap((s) => [api(`/api/sessions/${s}`, 'sessions.jsonl'), api(`/api/sessions/${s}/history`, 'sessions.jsonl')]),
  api('/api/overview/sessions', 'sessions.jsonl'),
  ...['/api/cases', '/api/cases?only_success=1', '/api/cases?offset=1&limit=2', '/api/cases/retrieve?task=index+page&top_k=2', '/api/overview/tags'].map(
    (path) => api(path, 'cases.jsonl'),
  ),
  api('/api/journal/check', 'sessions.jsonl', false),
  // The activity chart from the counts the writes keep in each keyed journal's index (derived/tally.ts): the copy
  // counts by its own index, rebuilt by a streamed scan. A day too, so that the window starts among the history's
  // records. It reads the cases' journal as well: not every problem of the sessions' is its to report.
  ...['/api/overview/activity', '/api/overview/activity?days=1'].map((path): Read => ({ ...api(path, 'sessions.jsonl', false), also: 'cases.jsonl' })),
];

/**
 * Case lists sorted by a column and limited (issue 47 item 2: from the bank's columns, the shown cases alone read),
 * filtered by tag and outcome, counted: the CLI's (through the operation) and the dashboard's page of them.
 */
export const SORTED_CASE_READS: Read[] = [
  ...(
    [
      [{}, 'created', true, 2],
      [{}, 'created', false, 3],
      [{ tags: ['deploy'] }, 'created', true, 2],
      [{ tags: ['cache', 'index'] }, 'created', false, 1],
      [{ success: true }, 'reward', true, 2],
      [{}, 'reward', false, 3],
      [{ tags: ['cache', 'index'] }, 'reward', true, 1],
      [{}, 'reused', true, 2],
      [{}, 'reused', false, 3],
      [{ success: false, tags: ['timeout'] }, 'reused', false, 2],
    ] as const
  ).map(
    ([filter, key, descending, limit]): Read => ({
      name: `case list ${JSON.stringify(filter)} --sort ${descending ? '-' : ''}${key} --limit ${limit}`,
      file: 'cases.jsonl',
      run: (ctx) => caseOps.countedCases(ctx, filter, { sort: { key, descending }, limit }),
    }),
  ),
  ...[
    '/api/cases?sort=-created&limit=2',
    '/api/cases?sort=-created&offset=1&limit=2&tag=cache',
    '/api/cases?sort=-created&offset=0&limit=3&only_failure=1',
    '/api/cases?sort=-reward&limit=2',
    '/api/cases?sort=reused&offset=1&limit=2&tag=cache',
  ].map((path) => api(path, 'cases.jsonl')),
];
