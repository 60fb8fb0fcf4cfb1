// `crux mcp`: a Model Context Protocol server over stdio (SPEC §10.1) on the SDK's low-level Server, so that an
// unknown tool and malformed arguments are protocol errors (McpServer would turn them into tool results).
// Every call builds its own context (clock, data directory) and runs one transaction: nothing is kept between
// calls that another writer could make stale.
import type * as Sdk from './sdk';
import { contextOf, type GlobalOptions } from '../context';
import { ArgumentError, TOOLS, type Tool } from './tools';
import { runBundle } from '../code-cache';
import type { Writable } from 'node:stream';
import { writeStdout } from '../../output/stdout';
import { CruxError, errorDocument, internalError } from '../../shared/errors';

const INSTRUCTIONS =
  "crux keeps this agent's working memory in a shared data directory: sessions (what you are doing: session_put / session_get / session_close), " +
  'cases (what worked before: case_record, then case_retrieve by task) and handoff packages (create_handoff for another agent, accept_handoff from one). ' +
  'A refused call answers isError with {"error": {code, kind, message, hint}}; the hint says what to do.';

const ERROR_SCHEMA = {
  type: 'object',
  properties: { code: { type: 'integer' }, kind: { type: 'string' }, message: { type: 'string' }, hint: { type: 'string' } },
  required: ['code', 'kind', 'message', 'hint'],
};

/** The SDK: dist/mcp.cjs beside the running dist/crux.cjs (build.mjs bundles it apart), loaded here only. */
const loadSdk = (): typeof Sdk => runBundle((require('node:path') as typeof import('node:path')).join(__dirname, 'mcp.cjs')) as typeof Sdk;

function describeTool(sdk: typeof Sdk, tool: Tool, input: Sdk.z.ZodObject) {
  const { $schema: _, ...inputSchema } = sdk.z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema,
    // A refusal carries {error} instead of the document: the SDK's Client validates both against this schema.
    outputSchema: {
      type: 'object',
      properties: { ...tool.output, error: ERROR_SCHEMA },
      anyOf: [{ required: Object.keys(tool.output) }, { required: ['error'] }],
    },
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: tool.destructive, idempotentHint: tool.idempotent, openWorldHint: false },
  };
}

function refusal(error: CruxError) {
  const document = errorDocument(error);
  return { content: [{ type: 'text' as const, text: `crux: ${document.error.message} (${document.error.hint})` }], structuredContent: document, isError: true };
}

/** Serves until the client closes standard input, then lets the calls in flight finish. */
export async function serve(opts: GlobalOptions, version: string): Promise<void> {
  // Identities, data directory, --now and CRUX_LOCK_TIMEOUT are checked once before serving (exit 5 on bad ones).
  contextOf(opts);
  const sdk = loadSdk();
  // Thrown as a plain Error with a JSON-RPC code: an McpError would put "MCP error -32602:" in its message twice.
  const invalidParams = (message: string) => Object.assign(new Error(message), { code: sdk.ErrorCode.InvalidParams });
  const inputs = new Map(TOOLS.map((tool) => [tool.name, sdk.z.object(tool.input(sdk.z)).strict()]));
  const listing = TOOLS.map((tool) => describeTool(sdk, tool, inputs.get(tool.name)!));
  const server = new sdk.Server({ name: 'crux', version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const inFlight = new Set<Promise<unknown>>();

  server.setRequestHandler(sdk.ListToolsRequestSchema, async () => ({ tools: listing }));
  server.setRequestHandler(sdk.CallToolRequestSchema, (request) => {
    const { name, arguments: args } = request.params;
    const tool = TOOLS.find((t) => t.name === name);
    if (tool === undefined) throw invalidParams(`unknown tool ${JSON.stringify(name)}; tools/list names them`);
    const parsed = inputs.get(name)!.safeParse(args ?? {});
    if (!parsed.success) throw invalidParams(`invalid arguments for ${name}: ${sdk.z.prettifyError(parsed.error).replace(/\n/g, '; ')}`);
    const call = (async () => {
      try {
        const answer = await tool.run(contextOf(opts), parsed.data);
        return { content: [{ type: 'text' as const, text: answer.text }], structuredContent: answer.structured };
      } catch (caught) {
        if (caught instanceof ArgumentError) throw invalidParams(`invalid arguments for ${name}: ${caught.message}`);
        return refusal(caught instanceof CruxError ? caught : internalError(caught, Boolean(process.env.CRUX_DEBUG)));
      }
    })();
    inFlight.add(call);
    void call.catch(() => {}).finally(() => inFlight.delete(call));
    return call;
  });

  // Protocol messages go out through the one writer (output/stdout.ts): each whole, by write(2); a client gone
  // mid-answer (EPIPE) ends them quietly. process.stdout is never touched.
  const stdout = { write: (chunk: string) => (writeStdout(chunk), true), once: () => stdout, on: () => stdout };
  const transport = new sdk.StdioServerTransport(process.stdin, stdout as unknown as Writable);
  const ended = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await server.connect(transport);
  const answered = countAnswers(transport);
  await ended;
  // Every request read before input ended is answered before the server closes: its handler may not have
  // started yet (the SDK dispatches on a later turn), and a finished call's response is sent on a later turn
  // still — so the server waits for the responses themselves, not only for the calls it knows of.
  await answered.all(() => inFlight.size > 0);
  await Promise.allSettled([...inFlight]);
  await server.close();
}

type JsonRpc = { id?: unknown; method?: unknown; result?: unknown; error?: unknown };

/** Counts the requests the transport delivers and the responses it sends; `all()` waits until they match. */
function countAnswers(transport: { onmessage?: ((message: any, extra?: any) => void) | undefined; send(message: any, options?: any): Promise<void> }) {
  let open = 0;
  let wake: (() => void) | undefined;
  const deliver = transport.onmessage;
  transport.onmessage = (message: JsonRpc, extra?: unknown) => {
    if (message.id !== undefined && message.method !== undefined) open += 1;
    deliver?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JsonRpc, options?: unknown) => {
    try {
      await send(message, options);
    } finally {
      if (message.id !== undefined && message.method === undefined && (message.result !== undefined || message.error !== undefined)) {
        open -= 1;
        if (open <= 0) wake?.();
      }
    }
  };
  return {
    /**
     * Resolves once every request has its response — or once no call has run for a second (a request the
     * SDK never answers, one the client cancelled, must not keep the server up).
     */
    all: (busy: () => boolean) =>
      open <= 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            let idle = 0;
            const timer = setInterval(() => {
              idle = busy() ? 0 : idle + 1;
              if (idle >= 20) done();
            }, 50);
            const done = () => {
              clearInterval(timer);
              resolve();
            };
            wake = done;
          }),
  };
}
