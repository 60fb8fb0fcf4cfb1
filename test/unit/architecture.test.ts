// The layers point down only: cli → output, domain → journal → shared. This test reads every import.
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '../../src');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every module a file imports (static, dynamic and require), as written. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const found = [...text.matchAll(/(?:from\s+|import\(\s*|require\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return found;
}

const layerOf = (file: string) => relative(SRC, file).split('/')[0]!;

const FORBIDDEN: Record<string, { layers: string[]; packages: string[] }> = {
  shared: { layers: ['cli', 'output', 'domain', 'journal'], packages: ['commander', 'chalk', 'cli-table3'] },
  journal: { layers: ['cli', 'output', 'domain'], packages: ['commander', 'chalk', 'cli-table3'] },
  domain: { layers: ['cli', 'output'], packages: ['commander', 'chalk', 'cli-table3'] },
  output: { layers: ['cli'], packages: ['commander'] },
};

describe('architecture', () => {
  it('has no import that points up the layers', () => {
    const violations: string[] = [];
    for (const file of sources(SRC)) {
      const rules = FORBIDDEN[layerOf(file)];
      if (rules === undefined) continue;
      for (const spec of importsOf(file)) {
        if (rules.packages.includes(spec)) violations.push(`${relative(SRC, file)} imports ${spec}`);
        if (spec.startsWith('.')) {
          const target = layerOf(join(file, '..', spec));
          if (rules.layers.includes(target)) violations.push(`${relative(SRC, file)} imports ${spec} (${target})`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('keeps chalk and cli-table3 in output/style.ts only', () => {
    const users = sources(SRC).filter((f) => importsOf(f).some((s) => s === 'chalk' || s === 'cli-table3'));
    expect(users.map((f) => relative(SRC, f))).toEqual(['output/style.ts']);
  });

  it('keeps the domain free of the file system', () => {
    const users = sources(join(SRC, 'domain')).filter((f) => importsOf(f).some((s) => s === 'node:fs' || s === 'fs'));
    expect(users.map((f) => relative(SRC, f))).toEqual([]);
  });
});

describe('commands', () => {
  it('are thin: no command file over 120 lines (logic that grows belongs in domain/ or output/)', () => {
    const long = sources(join(SRC, 'cli/commands'))
      .map((f) => [relative(SRC, f), fs.readFileSync(f, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 120);
    expect(long).toEqual([]);
  });

  it('write to stdout and stderr only through output/stdout.ts', () => {
    const direct = sources(SRC).filter((f) => /process\.(stdout|stderr)\.write|console\.(log|error|warn|info)/.test(fs.readFileSync(f, 'utf8')));
    expect(direct.map((f) => relative(SRC, f))).toEqual([]);
  });
});
