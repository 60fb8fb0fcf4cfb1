// The import graph of src/, read from the sources: every static, dynamic, require and re-export edge, with
// whether it is type-only (erased at build time), for the architecture test.
import * as fs from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const SRC = resolve(__dirname, '../../src');

export interface Edge {
  /** The module as written: a package name, a `node:` builtin or a relative path. */
  readonly spec: string;
  /** The src file a relative import names (relative to SRC), else undefined. */
  readonly target: string | undefined;
  /** `import type`, `export type`, or an import whose every name is `type X`: gone from the bundle. */
  readonly typeOnly: boolean;
}

export function sourceFiles(dir = SRC): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

function resolveRelative(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return relative(SRC, candidate);
  }
  return undefined;
}

const STATIC = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const BARE = /^\s*import\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /(?:\bimport\(\s*|\brequire\(\s*)['"]([^'"]+)['"]/g;

/** Every import of one file (comments are not stripped: a commented-out import still counts, as it should not be there). */
export function edgesOf(file: string): Edge[] {
  const text = fs.readFileSync(file, 'utf8');
  const edge = (spec: string, typeOnly: boolean): Edge => ({ spec, target: spec.startsWith('.') ? resolveRelative(file, spec) : undefined, typeOnly });
  const edges: Edge[] = [];
  for (const m of text.matchAll(STATIC)) {
    const clause = m[3]!;
    const names = /^\{([^}]*)\}$/
      .exec(clause.trim())?.[1]
      ?.split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    const allTypes = names !== undefined && names.length > 0 && names.every((n) => n.startsWith('type '));
    edges.push(edge(m[4]!, m[2] !== undefined || allTypes));
  }
  for (const m of text.matchAll(BARE)) edges.push(edge(m[1]!, false));
  for (const m of text.matchAll(DYNAMIC)) edges.push(edge(m[1]!, false));
  return edges;
}

export interface ModuleGraph {
  readonly files: string[];
  readonly edges: ReadonlyMap<string, Edge[]>;
}

export function moduleGraph(): ModuleGraph {
  const files = sourceFiles().map((f) => relative(SRC, f));
  return { files, edges: new Map(files.map((f) => [f, edgesOf(join(SRC, f))])) };
}

/** The strongly connected components of more than one file (Tarjan): every import circle, type-only edges included. */
export function importCircles(graph: ModuleGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const { target: w } of graph.edges.get(v) ?? []) {
      if (w === undefined) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const f of graph.files) if (!index.has(f)) visit(f);
  // A file that imports itself is a circle too.
  for (const f of graph.files) if ((graph.edges.get(f) ?? []).some((e) => e.target === f)) circles.push([f]);
  return circles;
}

/** The path of runtime (not type-only) imports from `from` to a file for which `reaches` holds, if there is one. */
export function runtimePathTo(graph: ModuleGraph, from: string, reaches: (file: string) => boolean): string[] | undefined {
  const seen = new Set([from]);
  const queue: string[][] = [[from]];
  while (queue.length > 0) {
    const trail = queue.shift()!;
    const at = trail[trail.length - 1]!;
    if (reaches(at)) return trail;
    for (const e of graph.edges.get(at) ?? []) {
      if (e.typeOnly || e.target === undefined || seen.has(e.target)) continue;
      seen.add(e.target);
      queue.push([...trail, e.target]);
    }
  }
  return undefined;
}
