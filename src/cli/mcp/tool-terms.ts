// The shared error table speaks to a person at a shell (`see crux session list`, --max-tokens); a model calls
// tools. This translates a refusal's words into tool and argument names, so the domain keeps one set of
// messages: a command that is a tool becomes "call <tool>", an option that is an argument "argument <name>",
// and the few that have no tool are said in neutral words.
import { TOOLS } from './tools';

/**
 * Anything zod's builder answers: a tool's `input` run on it gives the tool's argument names without zod, so no
 * schema is built for them (server.ts builds each when first called).
 */
const ANY_ZOD: any = new Proxy(() => ANY_ZOD, { get: () => ANY_ZOD, apply: () => ANY_ZOD });

let known: { tools: ReadonlySet<string>; args: ReadonlySet<string> } | undefined;

/** Every tool (SPEC §10.1), and every argument some tool takes (an option spelled --x-y is the argument x_y). */
export const toolNames = () => (known ??= { tools: new Set(TOOLS.map((t) => t.name)), args: new Set(TOOLS.flatMap((t) => Object.keys(t.input(ANY_ZOD)))) });

/** What a session state allows, as the machine names it (decide.ts), in the tools that do it (touch: a hook's). */
const OP_TOOLS: Readonly<Record<string, string | null>> = {
  touch: null,
  put: 'session_put',
  archive: 'session_archive',
  unarchive: 'session_unarchive',
  close: 'session_close',
  handoff: 'create_handoff',
  receive: 'accept_handoff',
};

/** Said in other words: what a tool cannot do, or a flag with no argument behind it. */
const PHRASES: readonly [RegExp, string][] = [
  [
    /the report names each problem \(with --json, in the document\); `crux journal check --repair` quarantines them/g,
    'journal_check lists the problems; an operator repairs them at a shell',
  ],
  [/run `crux journal check --repair`( on the source)? first/g, 'an operator must repair the journal$1 first (journal_check lists the problems)'],
  [/(?:see |run )?`crux journal check --repair`/g, "an operator's repair (journal_check lists the problems)"],
  [/run `crux handoff keygen --agent ([^`]+)` first/g, 'leave alg out to sign with the shared key, or have an operator make agent $1 an Ed25519 key'],
  [/ \(`crux handoff export <id>` on the minting side\)/g, ' from the sender'],
  [/`crux handoff mint` \(or a Crux daemon\) printed/g, 'create_handoff (or crux handoff mint, or a Crux daemon) gave'],
  [/accept it as the agent it is addressed to \(--as\)/g, 'only the agent it is addressed to can accept it, through its own server'],
  [/, or an earlier --now/g, ''],
  [/ \(use --all-agents\)/g, " (another agent's server lists its own)"],
  [/: (?:use --agent|leave --agent out).*$/, ': a server of that scope reads it'],
  [/see `crux --help`/g, 'tools/list describes every tool and its arguments'],
  [/the command's --help shows what it accepts/g, 'tools/list describes what each argument accepts'],
  [/only delete removes it/g, 'only an operator can delete it'],
  [/give the store key with --key-file <file> or CRUX_KEY_FILE/g, "start the server with the store key's file in CRUX_KEY_FILE"],
];

// A command line, with its operands' placeholders (`<id>`: the tool's own arguments name them) and boolean options.
const COMMAND = /(see |run )?`crux ([a-z]+) ([a-z]+)(?: <[a-z-]+>)*((?: --[a-z-]+)*)`/g;
const FLAG = /(^|[\s(/])--([a-z][a-z-]*)\b/g;
const ALLOWS = /allows: ([a-z]+(?:, [a-z]+)*)/g;

/** A command that is a tool, as that tool ("see …" as "call …"); its boolean options as arguments set to true. */
function callOf(match: string, verb: string | undefined, group: string, command: string, flags: string): string {
  const name = `${group}_${command}`;
  if (!toolNames().tools.has(name)) return match;
  const args =
    flags.trim() === ''
      ? []
      : flags
          .trim()
          .split(' ')
          .map((f) => f.slice(2).replace(/-/g, '_'));
  if (!args.every((a) => toolNames().args.has(a))) return match;
  return `${verb === undefined ? '' : 'call '}${name}${args.length === 0 ? '' : ` with ${args.map((a) => `${a}: true`).join(', ')}`}`;
}

/** A refusal's message or hint in tool terms (see the top of this file). */
export function inToolTerms(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PHRASES) out = out.replace(pattern, replacement);
  out = out.replace(COMMAND, callOf);
  out = out.replace(ALLOWS, (match, ops: string) => {
    const tools = ops.split(', ').map((op) => OP_TOOLS[op]);
    return tools.every((t) => t !== undefined) ? `allows: ${tools.filter((t) => t !== null).join(', ')}` : match;
  });
  return out.replace(FLAG, (match, before: string, flag: string) => {
    const name = flag.replace(/-/g, '_');
    return toolNames().args.has(name) ? `${before}argument ${name}` : match;
  });
}
