// A tools/call's and a tools/list's params as MCP 2025-11-25 has a server answer them: what is not a call at all
// (params that are not an object, no tool name, `arguments` that are not an object) and a cursor this server never
// gave are protocol errors (-32602), each one line; arguments that fail the tool's input schema are the model's to
// correct, so they are a refusal (isError, code 5) in one line naming each argument, not a validator's dump (SEP-1303).

/** What zod says of an argument, as much of it as this file reads (zod 4's issue). */
export interface ArgumentIssue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly keys?: readonly string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const kindOf = (value: unknown) =>
  value === undefined ? 'nothing' : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

/** A tools/call's name and arguments, or the one-line reason it is not a call (a protocol error). */
export function callOf(params: unknown): { name: string; args: Record<string, unknown> } | { invalid: string } {
  if (!isObject(params)) return { invalid: `tools/call takes params {name, arguments}, not ${kindOf(params)}` };
  const { name, arguments: args } = params;
  if (typeof name !== 'string')
    return { invalid: `tools/call needs the tool's name as a string, not ${name === undefined ? 'nothing' : kindOf(name)}; tools/list names them` };
  if (args !== undefined && !isObject(args)) return { invalid: `the arguments of ${name} must be an object of arguments by name, not ${kindOf(args)}` };
  return { name, args: args ?? {} };
}

/** Why a tools/list's params are refused (a protocol error), or undefined: this server gives every tool in one page. */
export function listRefusal(params: unknown): string | undefined {
  if (params === undefined) return undefined;
  if (!isObject(params)) return `tools/list takes params {cursor?}, not ${kindOf(params)}`;
  if (params.cursor !== undefined) return `invalid cursor ${JSON.stringify(params.cursor)}: this server lists every tool at once and gives no cursor`;
  return undefined;
}

/** One issue in a few words: the argument it names, and what is wrong with it. */
function describe(issue: ArgumentIssue, args: Record<string, unknown>): string {
  if (issue.code === 'unrecognized_keys' && issue.keys !== undefined) {
    return `unknown argument${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}`;
  }
  const top = issue.path[0];
  if (top === undefined) return issue.message;
  const name = issue.path.map(String).join('.');
  if (issue.path.length === 1 && args[String(top)] === undefined) return `argument ${name} is missing`;
  return `argument ${name}: ${issue.message.replace(/^Invalid input: /, '')}`;
}

/** The arguments' issues as one line (every argument named once, in the order zod found them). */
export function argumentsProblem(tool: string, issues: readonly ArgumentIssue[], args: Record<string, unknown>): string {
  const said = [...new Set(issues.map((issue) => describe(issue, args)))];
  return `invalid arguments for ${tool}: ${said.join('; ')}`.replace(/\s*\n\s*/g, ' ');
}
