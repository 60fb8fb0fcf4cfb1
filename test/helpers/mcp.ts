// An MCP client (the SDK's own Client over stdio) talking to the built `bin/crux mcp`, as an agent's host would.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, expect } from 'vitest';
import { CRUX, storeArgs, testEnv } from './cli';

export interface McpSession {
  readonly client: Client;
  /** Calls a tool; a protocol error rejects. */
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `crux [globals] mcp [args]` on `dataDir` (a path, or a postgres:// URL) and connects (initialize + initialized). */
export async function startMcp(
  dataDir: string,
  args: string[] = [],
  opts: { env?: Record<string, string | undefined>; globals?: string[] } = {},
): Promise<McpSession> {
  const env = Object.fromEntries(Object.entries(testEnv(opts.env)).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({ command: CRUX, args: [...storeArgs(dataDir), ...(opts.globals ?? []), 'mcp', ...args], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: 'crux-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    call: (name, a = {}) => client.callTool({ name, arguments: a }),
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/** A session_get document as the CLI's `--json` prints it: the same, less the state's exact text (MCP's own). */
export function withoutStateText(doc: { session: Record<string, unknown> }): { session: Record<string, unknown> } {
  const { state_text: _, ...session } = doc.session;
  return { ...doc, session };
}

/** Servers started through `serverPool().start`, closed together by `closeAll` (an afterEach). */
export function serverPool(globals: string[] = []) {
  const open: McpSession[] = [];
  return {
    async start(dir: string, agent: string | undefined, opts: Parameters<typeof startMcp>[2] = {}): Promise<McpSession> {
      const s = await startMcp(dir, agent === undefined ? [] : ['--agent', agent], { ...opts, globals: [...globals, ...(opts.globals ?? [])] });
      open.push(s);
      return s;
    },
    closeAll: () => Promise.all(open.splice(0).map((s) => s.close())),
  };
}

/** A refused call: isError, the error table's code, and the one-line text `crux: <message> (<hint>)`. */
export function expectRefusal(result: any, code: number): { code: number; kind: string; message: string; hint: string } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent.error).toMatchObject({ code });
  expect(Object.keys(result.structuredContent.error)).toEqual(['code', 'kind', 'message', 'hint']);
  expect(result.content[0].text).toMatch(/^crux: .+ \(.+\)$/);
  return result.structuredContent.error;
}

export interface RawMcp {
  /** Writes one line (a message, or raw text as it is) — or raw bytes, with no newline added. */
  send(message: unknown): void;
  write(bytes: string | Buffer): void;
  /** The response with this id, once it has come. */
  answer(id: number | string): Promise<any>;
  messages(): any[];
  stderr(): string;
  /** Ends standard input; resolves with the exit code. */
  end(): Promise<number | null>;
}

/** `crux mcp` spoken to line by line, initialized, as a client that is not the SDK would. */
export async function rawMcp(dataDir: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<RawMcp> {
  const { spawn } = await import('node:child_process');
  const child = spawn(CRUX, [...storeArgs(dataDir), 'mcp', ...args], { env: testEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const waiting: (() => void)[] = [];
  child.stdout.on('data', (c) => {
    out += String(c);
    for (const wake of waiting.splice(0)) wake();
  });
  child.stderr.on('data', (c) => (err += String(c)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const messages = () =>
    out
      .split('\n')
      .filter((l) => l.endsWith('}'))
      .map((l) => JSON.parse(l));
  const raw: RawMcp = {
    send: (m) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`),
    write: (bytes) => child.stdin.write(bytes),
    async answer(id) {
      for (;;) {
        const found = messages().find((m) => m.id === id);
        if (found !== undefined) return found;
        if (child.exitCode !== null) throw new Error(`crux mcp exited ${child.exitCode} before answering ${id}: ${err}`);
        await Promise.race([new Promise<void>((resolve) => waiting.push(resolve)), exited]);
      }
    },
    messages,
    stderr: () => err,
    end: () => {
      child.stdin.end();
      return exited;
    },
  };
  raw.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await raw.answer('init');
  raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return raw;
}

/** A tools/call request as one JSON-RPC message. */
export const toolCall = (id: number | string, name: string, args: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** The tools of SPEC §10.1, in the order the server lists them: written out here, not taken from src/. */
export const SPEC_TOOLS = [
  'session_put',
  'session_get',
  'session_list',
  'session_archive',
  'session_unarchive',
  'session_close',
  'case_record',
  'case_retrieve',
  'create_handoff',
  'accept_handoff',
  'session_history',
  'case_list',
  'case_show',
  'handoff_list',
  'journal_check',
];

/**
 * A suite's servers on a data directory (`--now` given), each closed after its test: call at the top of a test
 * file; the function it returns starts one for `agent` (none: no --agent).
 */
export function serversClosedAfterEach(now: string) {
  const open: McpSession[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return async (dir: string, agent: string | undefined, opts: Parameters<typeof startMcp>[2] = {}): Promise<McpSession> => {
    const s = await startMcp(dir, agent === undefined ? [] : ['--agent', agent], { globals: ['--now', now], ...opts });
    open.push(s);
    return s;
  };
}
