// The program builds what the command line needs: the named group with only the named command, else everything.
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../../src/cli/program';

const names = (command: Command) => command.commands.map((c) => c.name());
const build = (...args: string[]) => buildProgram(['node', 'crux', ...args]);

describe('buildProgram', () => {
  it('builds one group with one command for `session get`, whatever the global options before it', async () => {
    for (const args of [
      ['session', 'get', 'x'],
      ['--data-dir', 'session', 'session', 'get', 'x'],
      ['--json', '--agent', 'a', 'session', 'get', 'x'],
    ]) {
      const program = await build(...args);
      expect(names(program), args.join(' ')).toEqual(['session']);
      expect(names(program.commands[0]!), args.join(' ')).toEqual(['get']);
    }
  });

  it('builds the whole group for an alias, `help` or a typo, so that they resolve as before', async () => {
    for (const word of ['ls', 'help', 'gte']) {
      const program = await build('session', word);
      expect(names(program.commands[0]!)).toEqual(expect.arrayContaining(['put', 'get', 'list', 'close', 'reap', 'import']));
    }
    expect(names(await build('session'))).toEqual(['session']);
  });

  it('builds every group for help, an unknown word and completion, in the order of the tour', async () => {
    const all = ['session', 'case', 'handoff', 'journal', 'key', 'store', 'doctor', 'completion', 'mcp', 'hook', 'ui', '__complete'];
    for (const args of [[], ['--help'], ['sesion'], ['completion', 'bash']]) expect(names(await build(...args)), args.join(' ')).toEqual(all);
  });

  it('gives every command, built alone, the settings of the program: errors are thrown, not printed and exited', async () => {
    const program = await build('handoff', 'mint');
    const mint = program.commands[0]!.commands[0]!;
    expect(mint.name()).toBe('mint');
    await expect(program.parseAsync(['node', 'crux', 'handoff', 'mint', 'x', '--bogus'])).rejects.toMatchObject({ code: 'commander.unknownOption' });
    expect(mint.parent?.parent).toBe(program);
  });

  it('registers an action for every command of every group (a registry test, as npm has)', async () => {
    const program = await build();
    const leaves: Command[] = [];
    const walk = (c: Command) => (c.commands.length === 0 ? leaves.push(c) : c.commands.forEach(walk));
    walk(program);
    expect(leaves.length).toBeGreaterThan(25);
    for (const leaf of leaves) expect((leaf as unknown as { _actionHandler: unknown })._actionHandler, leaf.name()).toBeTypeOf('function');
    // Built alone, each command is the same command as in the whole group.
    for (const group of program.commands.filter((c) => c.commands.length > 0)) {
      for (const command of group.commands) {
        const alone = (await build(group.name(), command.name())).commands[0]!.commands;
        expect(alone.map((c) => [c.name(), c.options.map((o) => o.flags)])).toEqual([[command.name(), command.options.map((o) => o.flags)]]);
      }
    }
  });
});
