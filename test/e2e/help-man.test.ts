// The help and the man pages cannot drift: every command and option that --help shows is documented in its page.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CODES } from '../../src/shared/errors';
import { CRUX, testEnv } from '../helpers/cli';
import { sectionTerms, walkHelp, type HelpEntry } from '../helpers/help';
import { titled, toolsSkipReason } from '../helpers/tools';

const ROOT = resolve(__dirname, '../..');
const MAN = join(ROOT, 'man');
const noGroff = toolsSkipReason('groff');
const noMan = toolsSkipReason('man');

/** The text of a man page source without macros, font escapes and special characters, whitespace collapsed. */
export function manText(source: string): string {
  return source
    .split('\n')
    .filter((line) => !line.startsWith('.\\"'))
    .map((line) => line.replace(/^\.[A-Za-z]+\s?/, ''))
    .join(' ')
    .replace(/\\f(\[[^\]]*\]|\(..|.)/g, '')
    .replace(/\\-/g, '-')
    .replace(/\\\(aq/g, "'")
    .replace(/\\\(dq/g, '"')
    .replace(/\\\(em/g, ' ')
    .replace(/\\e/g, '\\')
    .replace(/\\[&|]/g, '')
    .replace(/\s+/g, ' ');
}

const mentions = (text: string, phrase: string) =>
  new RegExp(`(?<![\\w-])${phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+')}(?![\\w-])`).test(text);

/** The page that documents a command: a group and its commands, or a command with a page of its own (mcp); the rest are in crux(1). */
const pageOf = (entry: HelpEntry, groups: Set<string>) =>
  entry.path.length > 0 && (groups.has(entry.path[0]!) || fs.existsSync(join(MAN, `crux-${entry.path[0]}.1`))) ? `crux-${entry.path[0]}.1` : 'crux.1';

let tree: HelpEntry[];
let groups: Set<string>;

beforeAll(async () => {
  tree = await walkHelp();
  groups = new Set(tree.filter((e) => e.path.length === 1 && e.hasSubcommands).map((e) => e.path[0]!));
});

describe('help', () => {
  it('renders for every command and subcommand, with exit 0', () => {
    expect(tree.length).toBeGreaterThan(10);
    for (const entry of tree) {
      expect(entry.exitCode, `crux ${entry.path.join(' ')} --help`).toBe(0);
      expect(entry.text, `crux ${entry.path.join(' ')} --help`).toMatch(/^Usage: crux/);
    }
  });

  it('fits 80 columns: no line of any help (epilogues and examples included) is wider', () => {
    const wide = tree.flatMap((e) =>
      e.text
        .split('\n')
        .filter((line) => [...line].length > 80)
        .map((line) => `crux ${e.path.join(' ')}: ${line}`),
    );
    expect(wide).toEqual([]);
  });

  it('shows examples and points at the man pages at the top level', () => {
    const root = tree.find((e) => e.path.length === 0)!;
    expect(root.text).toMatch(/\nExamples:\n {2}crux /);
    expect(root.text).toContain('man crux');
    expect(root.text).toContain('crux help <command>');
  });

  it('shows an example for every command that does something', () => {
    const missing = tree
      .filter((e) => e.path.length > 0 && !e.hasSubcommands && !/\nExamples?\b[^\n]*:\n {2}\S/.test(e.text))
      .map((e) => `crux ${e.path.join(' ')}`);
    expect(missing, 'commands without an example in --help (addHelpText)').toEqual([]);
  });
});

describe('crux help', () => {
  const run = (args: string[]) => execa(CRUX, args, { reject: false, env: testEnv(), extendEnv: false });

  it('shows the help of the command it names, nested as in git: `help session put` is `session put --help`', async () => {
    const put = String((await run(['session', 'put', '--help'])).stdout);
    expect(put).toMatch(/^Usage: crux session put /);
    for (const args of [
      ['help', 'session', 'put'],
      ['session', 'help', 'put'],
      ['--json', 'help', 'session', 'put'],
      ['help', 'session', 'put', 'extra'],
    ]) {
      const r = await run(args);
      expect([r.exitCode, String(r.stdout)], args.join(' ')).toEqual([0, put]);
    }
    expect(String((await run(['help', 'session', 'ls'])).stdout)).toMatch(/^Usage: crux session list\|ls /);
    expect(String((await run(['help', 'session'])).stdout)).toBe(String((await run(['session', '--help'])).stdout));
    expect(String((await run(['help'])).stdout)).toBe(String((await run(['--help'])).stdout));
  });

  it('answers a word that names no command with a suggestion and exit 2, not the whole help', async () => {
    for (const [args, suggestion] of [
      [['help', 'sesion'], 'session'],
      [['help', 'session', 'pt'], 'put'],
      [['session', 'help', 'lst'], 'list'],
    ] as const) {
      const r = await run([...args]);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(String(r.stdout)).toBe('');
      expect(String(r.stderr)).toMatch(new RegExp(`^crux: unknown command '\\w+' \\(Did you mean (one of )?${suggestion}\\b`));
    }
  });

  it('lists, for every command, the global options it takes', async () => {
    for (const entry of tree.filter((e) => e.path.length > 0)) {
      const globals = sectionTerms(entry.text, 'Global Options').flatMap((t) => t.split(/[ ,]+/).filter((w) => w.startsWith('--')));
      expect(globals, `crux ${entry.path.join(' ')} --help`).toEqual(
        expect.arrayContaining(['--data-dir', '--agent', '--actor', '--json', '--now', '--quiet', '--no-color']),
      );
    }
  });
});

describe('man pages', () => {
  it('document every command and option that --help shows', () => {
    const gaps = new Map<string, string[]>();
    const note = (page: string, what: string) => gaps.set(page, [...(gaps.get(page) ?? []), what]);
    for (const entry of tree) {
      const page = pageOf(entry, groups);
      const path = join(MAN, page);
      if (!fs.existsSync(path)) {
        note(page, 'the page does not exist');
        continue;
      }
      const text = manText(fs.readFileSync(path, 'utf8'));
      const command = entry.path.join(' ');
      if (entry.path.length > 0 && !mentions(text, command)) note(page, `command "${command}"`);
      for (const alias of entry.aliases) if (!mentions(text, alias)) note(page, `alias "${alias}" of "${command}"`);
      // -h/--help and -V/--version belong to every command; crux(1) documents them once.
      const options = page === 'crux.1' ? entry.options : entry.options.filter((o) => !['-h', '--help', '-V', '--version'].includes(o));
      for (const option of options) if (!mentions(text, option)) note(page, `option ${option} of "crux ${command}"`.replace('"crux "', '"crux"'));
      // crux(1) lists every top-level command, groups included.
      if (entry.path.length === 1 && page !== 'crux.1' && !mentions(manText(fs.readFileSync(join(MAN, 'crux.1'), 'utf8')), `crux ${command}`)) {
        note('crux.1', `command "crux ${command}"`);
      }
    }
    const report = [...gaps].map(([page, what]) => `man/${page}:\n  ${[...new Set(what)].join('\n  ')}`).join('\n');
    expect(report, 'help/man drift').toBe('');
  });

  it("name, in crux(1)'s COMMANDS, every subcommand of every group", () => {
    const page = fs.readFileSync(join(MAN, 'crux.1'), 'utf8');
    const commands = page.slice(page.indexOf('.SH COMMANDS'), page.indexOf('.SH', page.indexOf('.SH COMMANDS') + 4));
    const missing: string[] = [];
    for (const group of groups) {
      const at = commands.indexOf(`.B crux ${group}\n`);
      if (at < 0) {
        missing.push(`crux ${group}`);
        continue;
      }
      const paragraph = manText(commands.slice(at, commands.indexOf('.TP', at + 1) < 0 ? undefined : commands.indexOf('.TP', at + 1)));
      for (const entry of tree.filter((e) => e.path.length === 2 && e.path[0] === group))
        if (!mentions(paragraph, entry.path[1]!)) missing.push(`crux ${entry.path.join(' ')}`);
    }
    expect(missing).toEqual([]);
  });

  it.skipIf(noGroff !== undefined)(titled('render without a single warning under groff -man -ww -z', noGroff), async () => {
    const pages = fs.readdirSync(MAN).filter((n) => /\.[1-8]$/.test(n));
    expect(pages).toEqual(expect.arrayContaining(['crux.1', 'crux-journal.1', 'crux-journal.5']));
    for (const page of pages) {
      const run = await execa('groff', ['-man', '-ww', '-z', join(MAN, page)], { reject: false });
      expect(run.stderr, page).toBe('');
      expect(run.exitCode, page).toBe(0);
    }
  });

  it.skipIf(noMan !== undefined)(titled('render under man --warnings at 80 columns without a warning, every line within 80 columns', noMan), async () => {
    const pages = fs.readdirSync(MAN).filter((n) => /\.[1-8]$/.test(n));
    for (const page of pages) {
      const run = await execa('man', ['--warnings', '-l', join(MAN, page)], {
        reject: false,
        env: { ...testEnv(), MANWIDTH: '80', MAN_KEEP_FORMATTING: '', PAGER: 'cat' },
      });
      expect(run.stderr, page).toBe('');
      const wide = String(run.stdout)
        .split('\n')
        .filter((line) => [...line].length > 80);
      expect(wide, page).toEqual([]);
    }
  });

  it('are exactly the pages package.json installs', () => {
    const listed: string[] = JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8')).man;
    const present = fs
      .readdirSync(MAN)
      .filter((n) => /\.[1-8]$/.test(n))
      .map((n) => `man/${n}`);
    for (const page of present) expect(listed, `${page} is not in package.json "man"`).toContain(page);
    const missing = listed.filter((p) => !fs.existsSync(join(ROOT, p)));
    expect(missing, 'pages package.json lists that do not exist').toEqual([]);
  });

  it('are each named by `crux help` (the root help), as crux(1) SEE ALSO names them', async () => {
    const listed: string[] = JSON.parse(fs.readFileSync(join(ROOT, 'package.json'), 'utf8')).man;
    const help = (await execa(CRUX, ['help'], { env: testEnv() })).stdout;
    const pages = help.slice(help.indexOf('Manual pages:')).replace(/\s+/g, ' ');
    const unnamed = listed.map((p) => p.replace(/^man\//, '').replace(/\.\d$/, '')).filter((name) => !new RegExp(`\\b${name}(?=[,;. ]|$)`).test(pages));
    expect(unnamed, 'pages `crux help` does not name').toEqual([]);
    const seeAlso = fs.readFileSync(join(MAN, 'crux.1'), 'utf8').split('.SH SEE ALSO')[1]!;
    for (const p of listed.filter((p) => p !== 'man/crux.1'))
      expect(seeAlso, p).toContain(
        p
          .replace(/^man\//, '')
          .replace(/-/g, '\\-')
          .replace(/\.(\d)$/, ' ($1)'),
      );
  });

  it('crux ui --help calls its token what it is: made for this run, working until the server stops, not one-time', async () => {
    const help = (await execa(CRUX, ['ui', '--help'], { env: testEnv() })).stdout.replace(/\s+/g, ' ');
    expect(help).not.toMatch(/one-time/i);
    expect(help).toContain('an access token made for this run');
    expect(help).toMatch(/works as often as it is opened, in any browser, until this server stops/);
    expect(manText(fs.readFileSync(join(MAN, 'crux-ui.1'), 'utf8')).replace(/\s+/g, ' ')).toMatch(/not used up/);
  });

  it('crux(1) has the whole exit-code table and every environment variable the code reads', () => {
    const text = fs.readFileSync(join(MAN, 'crux.1'), 'utf8');
    const exitStatus = text.slice(text.indexOf('.SH EXIT STATUS'), text.indexOf('.SH', text.indexOf('.SH EXIT STATUS') + 1));
    for (const code of new Set(Object.values(EXIT_CODES))) expect(exitStatus, `exit ${code}`).toContain(`.TP\n.B ${code}\n`);
    const environment = manText(text.slice(text.indexOf('.SH ENVIRONMENT'), text.indexOf('.SH FILES')));
    const read = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (p.endsWith('.ts')) {
          for (const m of fs.readFileSync(p, 'utf8').matchAll(/env\.(CRUX_\w+|NO_COLOR|XDG_DATA_HOME)|'(CRUX_\w+)'/g)) read.add((m[1] ?? m[2])!);
        }
      }
    };
    walk(join(ROOT, 'src'));
    expect(read.size).toBeGreaterThan(8);
    const undocumented = [...read].filter((name) => !mentions(environment, name));
    expect(undocumented, 'environment variables read by src/ but not in crux(1) ENVIRONMENT').toEqual([]);
  });
});
