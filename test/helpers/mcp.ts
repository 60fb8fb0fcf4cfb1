// An MCP client (the SDK's own Client over stdio) talking to the built `bin/crux mcp`, as an agent's host would.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CRUX, testEnv } from './cli';

export interface McpSession {
  readonly client: Client;
  /** Calls a tool; a protocol error rejects. */
  call(name: string, args?: Record<string, unknown>): Promise<any>;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `crux [globals] mcp [args]` on `dataDir` and connects (initialize + initialized). */
export async function startMcp(dataDir: string, args: string[] = [], opts: { env?: Record<string, string | undefined>; globals?: string[] } = {}): Promise<McpSession> {
  const env = Object.fromEntries(Object.entries(testEnv(opts.env)).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({ command: CRUX, args: ['--data-dir', dataDir, ...(opts.globals ?? []), 'mcp', ...args], env, stderr: 'pipe' });
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
