// The tests' hooks (SPEC §1): all named CRUX_TEST_*, read by one module (src/shared/test-hooks.ts) and listed in
// crux(1)'s ENVIRONMENT as for tests only; nothing else of src/ reads one, and every one the tests set is there.
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_HOOKS } from '../../../src/shared/test-hooks';
import { SRC, sourceFiles } from '../../helpers/module-graph';

const ROOT = resolve(__dirname, '../../..');
const HOOKS_MODULE = 'shared/test-hooks.ts';
const textOf = (file: string) => fs.readFileSync(join(SRC, file), 'utf8');
/** Every file of a tree, recursively. */
const filesUnder = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
/** The test-runner's own variables: read by the tests, never by crux, and not hooks of it. */
const RUNNER = new Set([
  'CRUX_TEST_PG_URL',
  'CRUX_TEST_PG_DIR',
  'CRUX_TEST_PG_SKIP',
  'CRUX_TEST_TMP',
  'CRUX_TEST_CHROMIUM',
  'CRUX_TEST_FULL',
  'CRUX_TEST_WORKERS',
  'CRUX_TEST_FC_SEED',
  'CRUX_TEST_FC_PATH',
  'CRUX_TEST_SCREENSHOTS',
  // Global setups run once per vitest project: these mark the run (its pid) that already did the work.
  'CRUX_TEST_TMP_BY',
  'CRUX_TEST_TOOLS_BY',
]);

describe("the tests' hooks", () => {
  it('are read by one module: no other file of src/ reads the environment for a CRUX_TEST_* variable', () => {
    const readers = sourceFiles()
      .map((file) => file.slice(SRC.length + 1))
      .filter((file) => file !== HOOKS_MODULE && /\benv(\.|\[\s*['"`])CRUX_TEST_/.test(textOf(file)));
    expect(readers).toEqual([]);
    expect(textOf(HOOKS_MODULE)).toMatch(/process\.env\[name\]/);
  });

  it('are all named CRUX_TEST_*, and name every hook the tests set', () => {
    for (const hook of TEST_HOOKS) expect(hook).toMatch(/^CRUX_TEST_[A-Z0-9_]+$/);
    const set = new Set<string>();
    for (const file of filesUnder(join(ROOT, 'test'))) {
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/\bCRUX_TEST_[A-Z0-9_]+/g)) if (!RUNNER.has(m[0])) set.add(m[0]);
    }
    expect([...set].filter((name) => !(TEST_HOOKS as readonly string[]).includes(name))).toEqual([]);
  });

  it("are listed in crux(1)'s ENVIRONMENT as for tests only, and no build variable is", () => {
    const man = fs.readFileSync(join(ROOT, 'man/crux.1'), 'utf8');
    const section = man.slice(man.indexOf('.SH ENVIRONMENT'), man.indexOf('.SH FILES'));
    const entry = section.slice(section.indexOf(`.BR ${TEST_HOOKS[0]}`));
    const heading = entry.slice(0, entry.indexOf('\n'));
    for (const hook of TEST_HOOKS) expect(heading, hook).toContain(hook);
    expect(entry).toMatch(/^For crux's own tests only/m);
    expect(section).not.toMatch(/CRUX_WARM_UP|CRUX_WRITE_CODE_CACHE/);
  });
});
