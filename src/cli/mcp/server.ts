// `crux mcp`: a Model Context Protocol server over stdio (SPEC §10.1) on the SDK's low-level Server. tools/call and
// tools/list are answered by its fallback handler, which reads their params itself (arguments.ts): the handlers the
// SDK registers parse a request with zod before they run, and answer params that do not parse with -32603 and a
// validator's dump. An unknown tool, params that are not a call and a cursor are protocol errors (-32602); arguments
// that fail a tool's schema are a refusal the model reads (isError, code 5), as MCP 2025-11-25 asks (SEP-1303).
// Every call builds its own context (clock, data directory) and runs one transaction: nothing is kept between
// calls that another writer could make stale.
import type * as Sdk from './sdk';
import { contextOf, type Context, type GlobalOptions } from '../context';
import { maxStateBytes } from '../operations/session';
import { TOOLS } from './tools';
import { builtListing, deriveListing, inputSchemaOf, type ToolListing } from './listing';
import { ArgumentError, type Tool } from './tool';
import { argumentsProblem, callOf, listRefusal } from './arguments';
import { CallOrder } from './call-order';
import { LineTransport } from './stdio-transport';
import { inToolTerms } from './tool-terms';
import { runBundle } from '../code-cache';
import { writeStdout } from '../../output/stdout';
import { CruxError, errorDocument, hintOf, internalError } from '../../shared/errors';
import type { JournalWarning } from '../../output/emit';

const INSTRUCTIONS =
  "crux keeps this agent's working memory in a shared data directory: sessions (what you are doing: session_put / session_get / session_close; " +
  'session_list and session_history to browse), cases (what worked before: case_record, then case_retrieve by task; case_list and case_show to browse) ' +
  'and handoff packages (create_handoff for another agent, accept_handoff from one; handoff_list). ' +
  'A refused call answers isError with {"error": {code, kind, message, hint}}; the hint says what to do.';

/**
 * A call's result: its text and document, and the damage its replays passed over, as the CLI's --json document
 * carries it (SPEC §8) and, unless the text is bytes to copy, as lines under the text (what stderr would say).
 */
function resultOf(text: string, document: object, warnings: readonly JournalWarning[], opts: { exactText?: true | undefined; isError?: true }) {
  const error = opts.isError ? { isError: true } : {};
  if (warnings.length === 0) return { content: [{ type: 'text' as const, text }], structuredContent: document, ...error };
  const lines = warnings.map((w) => `warning: ${w.file}:${w.line}: ${w.reason} (passed over; journal_check shows every problem)`);
  const said = opts.exactText ? text : [text, ...lines].join('\n');
  return { content: [{ type: 'text' as const, text: said }], structuredContent: { ...document, warnings: [...warnings] }, ...error };
}

/** The SDK's read buffer limit, at the least: and room for a state at its limit, every byte escaped (\u00xx). */
const messageLimit = (stateLimit: number) => Math.max(10 * 1024 * 1024, 6 * stateLimit + 64 * 1024);

/** The SDK: dist/mcp.cjs beside the running dist/crux.cjs (build.mjs bundles it apart), loaded here only. */
const loadSdk = (): typeof Sdk => runBundle((require('node:path') as typeof import('node:path')).join(__dirname, 'mcp.cjs')) as typeof Sdk;

/**
 * The Server's JSON Schema validator, which only elicitation (a request from server to client) uses: crux elicits
 * nothing. Given, so that the Server makes no Ajv of its own (~3 ms of every start; dist/mcp.cjs carries none).
 */
const NO_SCHEMAS: Sdk.JsonSchemaValidator = {
  getValidator() {
    throw new Error('crux mcp elicits nothing: it validates no JSON Schema');
  },
};

/**
 * A refused call: the error table's code and kind, its message and hint in tool terms (tool-terms.ts), and the
 * damage the call passed over before it was refused, as an answer carries it.
 */
function refusal(error: CruxError, warnings: Context['warnings'] = []) {
  const document = errorDocument(new CruxError(error.kind, inToolTerms(error.message), inToolTerms(hintOf(error))));
  return resultOf(`crux: ${document.error.message} (${document.error.hint})`, document, warnings, { isError: true });
}

/** The server and its tools, not yet connected: `serve` gives it stdio, the tests an in-memory transport. */
export function createServer(sdk: typeof Sdk, opts: GlobalOptions, version: string) {
  // Thrown as a plain Error with a JSON-RPC code: an McpError would put "MCP error -32602:" in its message twice.
  const invalidParams = (message: string) => Object.assign(new Error(message), { code: sdk.ErrorCode.InvalidParams });
  // Each tool's schema is built when first needed, by its first call: `initialize` and the tool list (the
  // build's, listing.ts) need none of them.
  const inputs = new Map<string, Sdk.z.ZodObject>();
  const inputOf = (tool: Tool) => {
    let input = inputs.get(tool.name);
    if (input === undefined) inputs.set(tool.name, (input = inputSchemaOf(sdk, tool)));
    return input;
  };
  let listing: ToolListing | undefined;
  const server = new sdk.Server({ name: 'crux', version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: NO_SCHEMAS });
  const order = new CallOrder();
  const inFlight = new Set<Promise<unknown>>();

  const answer = async (tool: Tool, args: Record<string, unknown>) => {
    let ctx: Context | undefined;
    try {
      ctx = contextOf(opts);
      const result = await tool.run(ctx, args);
      const structured = tool.document?.(result) ?? result;
      const raw = await tool.text(result, args);
      return resultOf(tool.toolTerms ? inToolTerms(raw) : raw, structured, ctx.warnings, { exactText: tool.exactText });
    } catch (caught) {
      // Two arguments that exclude each other: the schema's refusal, said the same way.
      if (caught instanceof ArgumentError)
        return refusal(new CruxError('invalid_input', `invalid arguments for ${tool.name}: ${caught.message}`), ctx?.warnings);
      return refusal(caught instanceof CruxError ? caught : internalError(caught, Boolean(process.env.CRUX_DEBUG)), ctx?.warnings);
    }
  };

  const callTool = (params: unknown) => {
    const call = callOf(params);
    if ('invalid' in call) throw invalidParams(call.invalid);
    const tool = TOOLS.find((t) => t.name === call.name);
    if (tool === undefined) throw invalidParams(`unknown tool ${JSON.stringify(call.name)}; tools/list names them`);
    const parsed = inputOf(tool).safeParse(call.args);
    if (!parsed.success) return Promise.resolve(refusal(new CruxError('invalid_input', argumentsProblem(tool.name, parsed.error.issues, call.args))));
    // Handlers start in the order the requests arrived: the call takes its place in that order here, at once.
    const answered = order.run(tool.touches(parsed.data), () => answer(tool, parsed.data));
    inFlight.add(answered);
    void answered.catch(() => {}).finally(() => inFlight.delete(answered));
    return answered;
  };
  const listTools = (params: unknown) => {
    const refused = listRefusal(params);
    if (refused !== undefined) throw invalidParams(refused);
    return { tools: (listing ??= builtListing() ?? deriveListing(sdk)) };
  };
  server.fallbackRequestHandler = async (request) => {
    if (request.method === 'tools/call') return (await callTool(request.params)) as Sdk.ServerResult;
    if (request.method === 'tools/list') return listTools(request.params) as Sdk.ServerResult;
    throw Object.assign(new Error('Method not found'), { code: sdk.ErrorCode.MethodNotFound });
  };
  return { server, inFlight };
}

/** Serves until the client closes standard input, then lets the calls in flight finish. */
export async function serve(opts: GlobalOptions, version: string): Promise<void> {
  // Identities, data directory, --now and CRUX_LOCK_TIMEOUT are checked once before serving (exit 5 on bad ones).
  const ctx = contextOf(opts);
  const sdk = loadSdk();
  const { server, inFlight } = createServer(sdk, opts, version);
  // Protocol messages go out through the one writer (output/stdout.ts): each whole, by write(2); a client gone
  // mid-answer (EPIPE) ends them quietly. process.stdout is never touched.
  const transport = new LineTransport(process.stdin, {
    maxMessageBytes: messageLimit(maxStateBytes(ctx)),
    isMessage: (value) => sdk.JSONRPCMessageSchema.safeParse(value).success,
    write: writeStdout,
  });
  await server.connect(transport);
  // Every request read before input ended is answered before the server closes: its handler may not have
  // started yet (the SDK dispatches on a later turn), and a finished call's response is sent on a later turn
  // still — so the server waits for the responses themselves, not only for the calls it knows of.
  await transport.finished(() => inFlight.size > 0);
  await Promise.allSettled([...inFlight]);
  await server.close();
}
