// The fast paths (src/cli/fast: the commands of dist/fast-read.cjs, fast.cjs, fast-record.cjs, fast-list.cjs and
// fast-retrieve.cjs) read a command line only as commander would: their tables are commander's definitions, and
// every line one takes — listed shapes and random ones — parses to commander's operands, options and global
// options; every line it leaves (help, errors, misplaced or unknown options) the full program answers.
import fc from 'fast-check';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, helpAsOption } from '../../../src/cli/program';
import { WRITE_COMMANDS } from '../../../src/cli/fast/commands';
import { READ_COMMANDS } from '../../../src/cli/fast/read-commands';
import { RECORD_COMMANDS } from '../../../src/cli/fast/record-commands';
import { LIST_COMMANDS } from '../../../src/cli/fast/list-commands';
import { RETRIEVE_COMMANDS } from '../../../src/cli/fast/retrieve-commands';
import { GLOBAL_OPTIONS, parseFast, type FastCommand, type FastOption } from '../../../src/cli/fast/parse';

/** Each bundle's table: a line reaches one of them (bin/crux), which reads it with its own commands only. */
const TABLES = { read: READ_COMMANDS, write: WRITE_COMMANDS, record: RECORD_COMMANDS, list: LIST_COMMANDS, retrieve: RETRIEVE_COMMANDS };
/** The list's and the retrieve's tables, for the lines of either. */
const QUERY_COMMANDS = [...LIST_COMMANDS, ...RETRIEVE_COMMANDS];
const EVERY_COMMAND = Object.values(TABLES).flat();
/** The get's, the session writes' and `case record`'s tables, for the lines of any (each reaches its command's). */
const FAST_COMMANDS = [...READ_COMMANDS, ...WRITE_COMMANDS, ...RECORD_COMMANDS];

const silence = (command: Command) => {
  command.configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
  for (const sub of command.commands) silence(sub);
};
const sub = (program: Command, [group, name]: readonly string[]) => program.commands.find((c) => c.name() === group)!.commands.find((c) => c.name() === name)!;

/** What the fast path's table says of `option`, as commander defines it. */
function asFast(option: Option): FastOption {
  // Repeatable: its parser collects (record's --tag, list's --status).
  const collected = option.argChoices ? undefined : (option.parseArg?.('b', ['a'] as never) as unknown);
  const repeatable = Array.isArray(collected) && collected.join() === 'a,b';
  return {
    attribute: option.attributeName(),
    takesValue: option.required,
    ...(option.negate ? { sets: false } : {}),
    ...(option.argChoices ? { choices: option.argChoices } : {}),
    ...(repeatable ? { repeatable: true } : {}),
  };
}

/** commander's parse of `args`: the operands, the command's options and the program's, or its error's code. */
async function commanderParse(args: readonly string[]) {
  const argv = ['node', 'crux', ...args];
  const program = await buildProgram(argv);
  silence(program);
  let seen: { path: string[]; operands: unknown[]; opts: unknown; globals: unknown } | undefined;
  for (const { path } of EVERY_COMMAND) {
    const command = program.commands.find((c) => c.name() === path[0])?.commands.find((c) => c.name() === path[1]);
    command?.action((...given: unknown[]) => {
      // A variadic last operand (`<query...>`) comes as one list: the fast path's operands are flat.
      const operands = given.slice(0, command.registeredArguments.length).flat();
      while (operands.length > 0 && operands[operands.length - 1] === undefined) operands.pop();
      seen = { path: [...path], operands, opts: { ...command.opts() }, globals: { ...program.opts() } };
    });
  }
  try {
    await program.parseAsync(helpAsOption(program, argv));
  } catch (error) {
    return { error: (error as { code?: string }).code ?? String(error) };
  }
  return seen ?? { error: 'another command' };
}

async function expectSameParse(args: readonly string[], table: readonly FastCommand<any>[]) {
  const fast = parseFast(args, table);
  if (fast === undefined) return false;
  expect({ path: [...fast.command.path], operands: fast.operands, opts: fast.opts, globals: fast.globals }, args.join(' ')).toEqual(await commanderParse(args));
  return true;
}

describe('the fast path', () => {
  it("has commander's own definitions: the program's options, each command's options, defaults and operands", async () => {
    const program = await buildProgram(['node', 'crux']);
    const globals = program.options.filter((o) => o.long !== '--version');
    const expected: Record<string, FastOption> = {};
    for (const o of globals) {
      expected[o.long!] = asFast(o);
      if (o.short) expected[o.short] = asFast(o);
    }
    expect(GLOBAL_OPTIONS).toEqual(expected);
    for (const fast of EVERY_COMMAND) {
      const command = sub(await buildProgram(['node', 'crux', ...fast.path]), fast.path);
      expect(command.aliases(), fast.path.join(' ')).toEqual(fast.aliases ?? []);
      expect(fast.options, fast.path.join(' ')).toEqual(Object.fromEntries(command.options.map((o) => [o.long!, asFast(o)])));
      // The values a command starts with before the line is read (`--no-headers`: headers true, `--tag`: []).
      const start: Record<string, unknown> = command.opts();
      const defaults = Object.fromEntries(
        command.options.filter((o) => start[o.attributeName()] !== undefined).map((o) => [o.long!, start[o.attributeName()]]),
      );
      expect(fast.defaults ?? {}, fast.path.join(' ')).toEqual(defaults);
      const args = command.registeredArguments;
      const most = args.some((a) => a.variadic) ? Infinity : args.length;
      expect(fast.operands, fast.path.join(' ')).toEqual([args.filter((a) => a.required).length, most]);
    }
    // Each bundle's table has its own commands: a line bin/crux gives to one is never another's.
    const paths = EVERY_COMMAND.map((c) => c.path.join(' '));
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('takes the lines agents write, each parsed as commander parses it', async () => {
    const lines = [
      ['session', 'get', 'build-42'],
      ['session', 'get', 'build-42', '--json'],
      ['--json', 'session', 'get', 'build-42'],
      ['--data-dir', '/d', 'session', 'get', 'x', '--at', '3'],
      ['--data-dir=/d', '--agent', 'a', 'session', 'get', 'help'],
      ['--data-dir', 'session', 'session', 'get', 'x'],
      ['session', '--quiet', 'get', 'x', '-q', '--no-color', '--color', 'always'],
      ['session', 'put', 'x', '{"step":1}'],
      ['session', 'put', 'x', '-'],
      ['session', 'put', 'x', '--file', '-', '--ttl', '2h'],
      ['session', 'put', '--ttl', '2h', 'x', '{}', '--add-tokens', '5', '--json', '--max-tokens=9'],
      ['session', 'put', 'x', '', '--tokens', '1', '--tokens', '2', '--expires-at', '2026-12-01T00:00:00Z'],
      ['--store', 'postgres://h/db', '--actor', 'ci', '--now', '2026-12-01T00:00:00Z', 'session', 'put', 'x', '{}'],
      ['session', 'close', 'x'],
      ['session', 'close', 'x', '--outcome', 'failed', '--summary', 'tests red'],
      ['case', 'record', '--task', 't', '--action', 'a', '--outcome', 'o'],
      ['case', 'record', '--task', 't', '--tag', 'a', '--tag=b', '--failure', '--reward', '0.5', '--context', 'c', '--receipt', 'r'],
      ['case', 'record', '--stdin', '--json'],
      ['case', 'record'],
      ['case', 'record', '--task', 't', '--context', '-v', '--tag=-q'],
    ];
    for (const line of lines) expect(await expectSameParse(line, FAST_COMMANDS), line.join(' ')).toBe(true);
    const queries = [
      ['session', 'list'],
      ['session', 'ls', '--json'],
      ['session', 'list', '--stranded', '--limit', '24', '--json'],
      ['--agent', 'a', 'session', 'list', '--all-agents', '--stale-after', '2h', '--fresh-for=5m', '-q'],
      ['session', 'list', '--status', 'closed', '--status=active,archived', '--sort', '-tokens', '--limit', '10', '--no-headers'],
      ['session', 'list', '--all', '--archived', '--sort', 'updated', '--limit', '-5', '--color', 'never'],
      ['case', 'retrieve', 'deploy'],
      ['case', 'retrieve', 'renew', 'the', 'tls', 'certificate', '--only-success', '--min-similarity', '0.2'],
      ['--json', 'case', 'retrieve', 'a', '--top-k', '3', 'b', '--limit=4', '--mark-reused', '--no-headers', 'c'],
      ['case', 'retrieve', 'help'],
      ['case', 'retrieve', '-', '', 'x'],
    ];
    for (const line of queries) expect(await expectSameParse(line, QUERY_COMMANDS), line.join(' ')).toBe(true);
  });

  it('leaves help, versions, errors and whatever it cannot read as commander would to the full program', () => {
    const lines = [
      ['session', 'get'],
      ['session', 'get', 'a', 'b'],
      ['session', 'get', 'x', '--help'],
      ['session', 'get', 'x', '-h'],
      ['help', 'session', 'get'],
      ['session', 'help', 'get'],
      ['-V', 'session', 'get', 'x'],
      ['session', 'get', '--', 'x'],
      ['session', 'get', 'x', '--bogus'],
      ['session', 'get', 'x', '--json=1'],
      ['--at', '3', 'session', 'get', 'x'],
      ['session', '--at', '3', 'get', 'x'],
      ['session', 'get', 'x', '--at'],
      ['session', 'get', 'x', '--color', 'bogus'],
      ['session', 'put', 'x', '--summary', 'y'],
      ['session', 'close', 'x', '--summary', '-q'],
      ['session', 'close', 'x', '--summary', '-qx'],
      ['session', 'close', 'x', '--summary', '-V'],
      ['session', 'close', 'x', '--summary', '--json'],
      ['--agent', '-x', 'session', 'get', 'x'],
      ['session', 'close', 'x', '-qj'],
      ['session', 'ls'],
      ['session', 'list'],
      ['case', 'record', 'extra'],
      ['case', 'retrieve', 'x'],
      ['x', 'session', 'get', 'y'],
    ];
    for (const line of lines) expect(parseFast(line, FAST_COMMANDS), line.join(' ')).toBeUndefined();
    const queries = [
      ['session', 'list', 'x'],
      ['session', 'list', '--help'],
      ['help', 'session', 'list'],
      ['session', 'help', 'ls'],
      ['session', 'list', '--limit'],
      ['session', 'list', '--limit', '-q'],
      ['session', 'list', '--sort', '--json'],
      ['session', 'list', '--no-headers=1'],
      ['session', 'list', '--top-k', '3'],
      ['session', 'list', '--', '--all'],
      ['case', 'retrieve'],
      ['case', 'retrieve', '--json'],
      ['case', 'retrieve', '-5'],
      ['case', 'retrieve', 'x', '--status', 'active'],
      ['case', 'retrieve', 'x', '--', '--json'],
      ['case', 'retrieve', 'x', '-h'],
      ['case', 'help', 'retrieve'],
      ['case', 'record', '--task', 't'],
      ['session', 'get', 'x'],
    ];
    for (const line of queries) expect(parseFast(line, QUERY_COMMANDS), line.join(' ')).toBeUndefined();
  });

  it('parses any line it takes exactly as commander does (random lines of the words and options involved)', async () => {
    // Lines made of a fast command's words and units before, between and after them: its options and the
    // program's with values (some refused, some reading as options), flags, operands, and now and then another
    // command's option or what commander alone reads (help, `--`, a combined flag, an unknown option).
    const values = fc.constantFrom(
      ...['x', '2h', '-', '', '3', 'always', 'never', 'bogus', '-q', '--json', 'session', 'get', 'list', 'help'],
      ...['-tokens', '-5', '-x', '-qx', '-Vx', '-h', '--', 'active,closed'],
    );
    const foreign = [
      ...['--', '-h', '--help', '-V', '-qj', '--bogus', '--summary', '--tag=b', '--json=1', '--failure=1', '--at'],
      ...['--status', '--top-k', '--no-headers=1', '-5', '-tokens'],
    ];
    const tables = Object.entries(TABLES).flatMap(([name, table]) => table.map((command) => [name, command] as const));
    const line = fc.constantFrom(...tables).chain(([table, command]) => {
      const options = { ...GLOBAL_OPTIONS, ...command.options };
      const unit: fc.Arbitrary<string[]> = fc.oneof(
        {
          weight: 6,
          arbitrary: fc
            .constantFrom(...Object.keys(options))
            .chain((o) => (options[o]!.takesValue ? values.map((v): string[] => [o, v]) : fc.constant<string[]>([o]))),
        },
        { weight: 1, arbitrary: fc.constantFrom(...Object.keys(options).filter((o) => o.startsWith('--'))).chain((o) => values.map((v) => [`${o}=${v}`])) },
        { weight: 3, arbitrary: fc.constantFrom('x', '{}', '-', '', 'help').map((w) => [w]) },
        { weight: 1, arbitrary: fc.constantFrom(...foreign).map((w) => [w]) },
      );
      const units = (max: number) => fc.array(unit, { maxLength: max }).map((us) => us.flat());
      return fc
        .tuple(units(2), units(1), units(4), fc.constantFrom(command.path[1], ...(command.aliases ?? [])))
        .map(([before, between, after, name]) => ({ table, args: [...before, command.path[0], ...between, name, ...after] }));
    });
    const taken = { read: 0, write: 0, record: 0, list: 0, retrieve: 0 };
    await fc.assert(
      fc.asyncProperty(line, async ({ table, args }) => {
        if (await expectSameParse(args, TABLES[table as keyof typeof TABLES])) taken[table as keyof typeof TABLES]++;
      }),
      { numRuns: 4000 },
    );
    // The property is about lines the fast paths take: enough of them are, of each.
    expect(taken.read).toBeGreaterThan(20);
    expect(taken.write).toBeGreaterThan(20);
    expect(taken.record).toBeGreaterThan(20);
    expect(taken.list).toBeGreaterThan(20);
    expect(taken.retrieve).toBeGreaterThan(20);
  });
});
