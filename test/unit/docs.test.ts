// The README is read in minutes and the docs hold together: README.md is at most 400 lines, and every relative link
// in README.md and docs/ (a file, and a heading in a Markdown file) names something that exists.
import * as fs from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

/** README.md and every Markdown file under docs/, as paths relative to the repository. */
function markdownFiles(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found.sort();
}

/** Markdown without its fenced code blocks and inline code spans, which hold no links and no headings. */
export function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The link targets of inline links and images: `[text](target)` and `![alt](target "title")`. */
export function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** What is wrong with each relative link of `file` (a path from the repository's root), one line each. */
export function brokenLinks(file: string, read: (path: string) => string | undefined): string[] {
  const markdown = read(file)!;
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto:: not ours to check
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    const path = pathPart === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURIComponent(pathPart)));
    if (path.startsWith('..')) {
      broken.push(`${file}: ${target} leaves the repository`);
      continue;
    }
    const text = read(path);
    if (text === undefined) {
      broken.push(`${file}: ${target} names no file (${path})`);
      continue;
    }
    if (anchor !== undefined && path.endsWith('.md') && !headingAnchors(text).has(anchor)) {
      broken.push(`${file}: ${target} names no heading of ${path}`);
    }
  }
  return broken;
}

/** A file of the repository as text (an image reads as garbage, which only its existence is checked for). */
const readRepo = (path: string): string | undefined => {
  try {
    return fs.statSync(join(ROOT, path)).isFile() ? fs.readFileSync(join(ROOT, path), 'utf8') : undefined;
  } catch {
    return undefined;
  }
};

describe('README.md and docs/', () => {
  it('the README is at most 400 lines', () => {
    const lines = fs.readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    expect(lines.length).toBeLessThanOrEqual(400);
  });

  it('every relative link in README.md and docs/ names an existing file (and, in a Markdown file, a heading there)', () => {
    const files = markdownFiles();
    expect(files).toContain('docs/recipes.md');
    expect(files.flatMap((file) => brokenLinks(file, readRepo))).toEqual([]);
  });

  it('the README links every page of docs/', () => {
    const readme = fs.readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(linkTargets(readme).map((t) => t.split('#')[0]));
    const pages = fs.readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
    for (const page of pages) expect(linked, page).toContain(`docs/${page}`);
  });
});

describe('the link checker', () => {
  const files: Record<string, string> = {
    'README.md': '# crux\n\n## Set up\n\nSee [the docs](docs/a.md#a-page), [b](docs/b.md), [c](docs/a.md#nothing), [up](#set-up), [web](https://x.org/y).\n',
    'docs/a.md':
      '# A page\n\n```md\n# Not a heading\n[not a link](missing.md)\n```\n\nBack to [the README](../README.md#set-up) and [out](../../etc/passwd); `[code](nowhere.md)`.\n',
  };
  const read = (path: string) => files[path];

  it('finds a missing file, a missing heading and a link out of the repository, and nothing in code', () => {
    expect(brokenLinks('README.md', read)).toEqual([
      'README.md: docs/b.md names no file (docs/b.md)',
      'README.md: docs/a.md#nothing names no heading of docs/a.md',
    ]);
    expect(brokenLinks('docs/a.md', read)).toEqual(['docs/a.md: ../../etc/passwd leaves the repository']);
  });

  it('spells anchors as GitHub does: punctuation and code marks dropped, repeated headings numbered', () => {
    expect([
      ...headingAnchors(
        '## Lifecycle hooks: `crux hook claude-code` and more\n## Turn 3 in sum, and turn 4\n## crux ui\n## crux ui\n## Issue 23’s turns 1–6\n',
      ),
    ]).toEqual(['lifecycle-hooks-crux-hook-claude-code-and-more', 'turn-3-in-sum-and-turn-4', 'crux-ui', 'crux-ui-1', 'issue-23s-turns-16']);
  });
});
