// What a tool of `crux mcp` is (SPEC §10.1), and the pieces every tool file builds its arguments and text from.
import type { z as Zod } from 'zod';
import type { Context } from '../context';
import { textOf, type Renderer } from '../../output/emit';
import { loadStyle } from '../../output/style';
import { usage } from '../../shared/errors';
import type { AgentName } from '../../shared/ids';

export type Z = typeof Zod;
export type JsonSchema = Record<string, unknown>;

/** Arguments that a schema cannot refuse alone (two that exclude each other): refused as the schema's are (code 5, server.ts). */
export class ArgumentError extends Error {}

/**
 * What a call reads or writes, for answering in the order received (call-order.ts): the sessions it names
 * (`session:<id>`), the case bank (`cases`), the handoff ledger (`handoffs`), or everything at once.
 */
export type Touches = readonly string[] | 'everything';

export interface Tool<S extends Zod.ZodRawShape = Zod.ZodRawShape, R extends object = any> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly readOnly: boolean;
  /** It may replace or end what is stored (MCP's destructiveHint). */
  readonly destructive: boolean;
  /** A second identical call changes nothing more (MCP's idempotentHint). */
  readonly idempotent: boolean;
  readonly input: (z: Z) => S;
  /** The top-level members of the structuredContent on success (a refusal carries `error` instead). */
  readonly output: Record<string, JsonSchema>;
  /** The text is bytes to copy as they are (a state, an envelope): warnings go into structuredContent only. */
  readonly exactText?: true;
  /** The text is the CLI's human output, which may name commands and options: said in tool terms (tool-terms.ts). */
  readonly toolTerms?: true;
  readonly touches: (args: Zod.infer<Zod.ZodObject<S>>) => Touches;
  /** The operation, as the CLI command runs it: its result is the CLI's --json document unless `document` picks it. */
  readonly run: (ctx: Context, args: Zod.infer<Zod.ZodObject<S>>) => Promise<R>;
  /** The structuredContent (the server adds `warnings`): the CLI's --json document of the result. */
  readonly document?: (result: R) => object;
  /** The text content: most often the CLI's human output of the result (`human`). */
  readonly text: (result: R, args: Zod.infer<Zod.ZodObject<S>>) => string | Promise<string>;
}

export const tool = <S extends Zod.ZodRawShape, R extends object>(spec: Tool<S, R>): Tool<S, R> => spec;

/** MCP's hints of the usual kinds of tool: one that only reads, one that adds, one that replaces or ends what is stored. */
export const READS = { readOnly: true, destructive: false, idempotent: true } as const;
export const WRITES = { readOnly: false, destructive: false, idempotent: false } as const;
export const REPLACES = { readOnly: false, destructive: true, idempotent: true } as const;

/** The CLI's human output of a result (without colour; stdout is the protocol pipe, so lists are TSV). */
export const human =
  <T>(render: Renderer<T>) =>
  async (result: T): Promise<string> =>
    textOf(render(result, await loadStyle({ color: false })));

export function requireAgent(ctx: Context, tool: string): AgentName {
  if (ctx.agent !== undefined) return ctx.agent;
  throw usage(
    `${tool} needs this server's agent identity`,
    "give the server one in the client's configuration: the arguments mcp --agent <name>, or CRUX_AGENT",
  );
}

export const sessionId = (z: Z) => z.string().describe("The session's id in this agent's scope (1-256 characters, no '::', no control characters).");
export const duration = (z: Z, what: string) => z.string().describe(`${what}, as a duration: 90s, 15m, 2h, 7d.`);
export const count = (z: Z, what: string) => z.number().int().min(0).describe(what);
export const limit = (z: Z, what: string) => count(z, `At most this many ${what} (0 or none: all).`).optional();
/** `limit` as the operations take it: 0 means no limit, as `--limit 0` does (SPEC §8). */
export const limitOf = (n: number | undefined): number | undefined => (n === undefined || n === 0 ? undefined : n);
/** A string or a list of them (a repeatable CLI option), as a list. */
export const listOf = <T extends string>(v: T | readonly T[] | undefined): T[] | undefined =>
  v === undefined ? undefined : typeof v === 'string' ? [v] : [...v];

export const OBJECT: JsonSchema = { type: 'object' };
export const SESSION = { session: OBJECT };
export const sessionKey = (id: string) => [`session:${id}`];
