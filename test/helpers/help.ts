// Walking the real program through `crux … --help`: every command, its aliases and its options, as help prints them
// (the program in-process, run-cli.ts: the same bytes as bin/crux, without a process per command).
import { runCli } from './run-cli';

export interface HelpEntry {
  /** e.g. ['session', 'put']; [] for the program. */
  readonly path: string[];
  readonly aliases: string[];
  /** Long and short option names, e.g. ['--file', '-q']. */
  readonly options: string[];
  readonly exitCode: number;
  readonly text: string;
  readonly hasSubcommands: boolean;
}

/** The first column of each entry of a help section (`Options:`, `Commands:`). */
export function sectionTerms(text: string, section: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`${section}:`);
  if (start < 0) return [];
  const terms: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '' || !line.startsWith(' ')) break;
    const m = /^ {2}(\S.*?)(?: {2,}|$)/.exec(line);
    if (m) terms.push(m[1]!);
  }
  return terms;
}

const optionNames = (term: string) => [...term.matchAll(/(?<![\w-])(--?[A-Za-z][\w-]*)/g)].map((m) => m[1]!);

async function help(path: string[], aliases: string[]): Promise<HelpEntry & { commands: { name: string; aliases: string[] }[] }> {
  const run = await runCli([...path, '--help']);
  const text = run.stdout;
  const commands = sectionTerms(text, 'Commands')
    .map((term) => term.split(' ')[0]!.split('|'))
    .filter(([name]) => name !== 'help')
    .map(([name, ...aliases]) => ({ name: name!, aliases }));
  return {
    path,
    aliases,
    options: sectionTerms(text, 'Options').flatMap(optionNames),
    exitCode: run.exitCode ?? -1,
    text,
    hasSubcommands: commands.length > 0,
    commands,
  };
}

/** Every command reachable from `crux --help`, depth first, with what its own --help shows. */
export async function walkHelp(): Promise<HelpEntry[]> {
  const out: HelpEntry[] = [];
  const visit = async (path: string[], aliases: string[]) => {
    const entry = await help(path, aliases);
    out.push(entry);
    for (const child of entry.commands) await visit([...path, child.name], child.aliases);
  };
  await visit([], []);
  return out;
}
