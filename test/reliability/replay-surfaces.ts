// The reads of reads-equal-replay.property.test.ts that other surfaces make (issue 53 item 8): the read-only MCP
// tools (through the server in-process, over the SDK's in-memory transport: warnings in structuredContent) and the
// `crux ui` API routes (api.ts's `answer`: warnings in the body), each server's stderr caught in memory. What
// every read answers: its document, what it said on stderr, and its `warnings`.
import { relative, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { contextOf, type Context } from '../../src/cli/context';
import { TOOLS } from '../../src/cli/mcp/tools';
import * as sdk from '../../src/cli/mcp/sdk';
import { createServer } from '../../src/cli/mcp/server';
import { answer as apiAnswer } from '../../src/cli/ui/api';
import { redirectStdio } from '../../src/output/stdout';
import type { JournalWarning } from '../../src/output/emit';
import { CruxError } from '../../src/shared/errors';

export const JOURNALS = ['sessions.jsonl', 'cases.jsonl'] as const;

/** One read as a surface makes it, and the journal it reads. */
export interface Read {
  readonly name: string;
  readonly file: (typeof JOURNALS)[number];
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

async function run(root: string, agent: string | undefined, now: number, read: Read): Promise<Answered> {
  const stderr: string[] = [];
  const ctx = contextOf({ dataDir: root, agent, now: new Date(now).toISOString() }, {}, (text) => stderr.push(text));
  let out: unknown;
  try {
    out = await read.run!(ctx);
  } catch (error) {
    if (!(error instanceof CruxError)) throw error;
    out = { error: error.kind, hint: error.hint };
  }
  return { out, stderr, warnings: [...ctx.warnings] };
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
    const scope = { globals: { dataDir: root, agent, now: new Date(now).toISOString() }, env: {} };
    const { status, body } = await apiAnswer(scope, parts, url.searchParams);
    const { warnings = [], ...document } = JSON.parse(body) as { warnings?: JournalWarning[] };
    // A refusal's body carries no `warnings` (as neither the CLI's --json error document nor an MCP refusal
    // does): what the request passed over on its way is told on the server's stderr only, read back from there.
    return { out: { status, document }, stderr, warnings: status === 200 ? warnings : stderr.flatMap((line) => toldOn(root, line)) };
  });
}

/**
 * A tool call as `crux mcp` answers it (its server in-process, over the SDK's in-memory transport): the
 * structuredContent, its warnings apart, and the text — journal_check's text is its document's, with the
 * store's path and timings in it, and a refusal's warnings are read back from stderr as the API's are.
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
      // The text ends with the warnings' lines (but a state's exact bytes): said apart, one a warning, since a
      // read of the cached store may pass over less than the replay.
      const lines = (result.content as { text: string }[])[0]!.text.split('\n');
      const told = lines.filter((line) => /^warning: .* \(passed over; journal_check shows every problem\)$/.test(line));
      const exact = TOOLS.find((t) => t.name === call.name)!.exactText === true;
      if (told.length !== (refused || exact ? 0 : warnings.length))
        throw new Error(`${call.name}: its text tells ${told.length} of ${warnings.length} warnings`);
      const text = call.name === 'journal_check' ? undefined : lines.filter((line) => !told.includes(line)).join('\n');
      return { out: { refused, structured, text }, stderr, warnings: refused ? stderr.flatMap((line) => toldOn(root, line)) : warnings };
    } finally {
      await client.close();
    }
  });
}

/** A damaged line as stderr tells it: `crux: <path>:<line>: <reason> (run `crux journal check`)`. */
function toldOn(root: string, text: string): JournalWarning[] {
  const m = /^crux: (\S+):(\d+): (.*?)(?: \(run `crux journal check`\))?\n$/.exec(text);
  return m === null ? [] : [{ file: relative(root, resolve(root, m[1]!)), line: Number(m[2]), reason: m[3]! }];
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
  ...['-/s0', 'a/s1', 'b/s3'].flatMap((s) => [api(`/api/sessions/${s}`, 'sessions.jsonl'), api(`/api/sessions/${s}/history`, 'sessions.jsonl')]),
  api('/api/overview/sessions', 'sessions.jsonl'),
  ...['/api/cases', '/api/cases?only_success=1', '/api/cases?offset=1&limit=2', '/api/cases/retrieve?task=index+page&top_k=2', '/api/overview/tags'].map(
    (path) => api(path, 'cases.jsonl'),
  ),
  api('/api/journal/check', 'sessions.jsonl', false),
];
