// The difference between two versions of a state, line by line (longest common subsequence), for the timeline.
export type DiffLine = { readonly op: ' ' | '+' | '-'; readonly text: string };

/** A state pretty-printed for reading (two-space JSON), or as stored when it is not JSON. */
export function pretty(state: string): string {
  try {
    return JSON.stringify(JSON.parse(state), null, 2);
  } catch {
    return state;
  }
}

const MAX_CELLS = 4_000_000;

/** The lines of `after` against `before`: kept, added, removed; common head and tail trimmed first. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }));
  if ((x.length + 1) * (y.length + 1) > MAX_CELLS) {
    // Too large to align: everything in between is replaced.
    out.push(...x.map((text) => ({ op: '-' as const, text })), ...y.map((text) => ({ op: '+' as const, text })));
  } else {
    const n = x.length;
    const m = y.length;
    const lcs = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--)
        lcs[i * (m + 1) + j] = x[i] === y[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    let i = 0;
    let j = 0;
    // Where both are possible, what went comes before what came, as diff -u shows it.
    while (i < n || j < m) {
      if (i < n && j < m && x[i] === y[j]) {
        out.push({ op: ' ', text: x[i++]! });
        j++;
      } else if (i < n && (j === m || lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!)) out.push({ op: '-', text: x[i++]! });
      else out.push({ op: '+', text: y[j++]! });
    }
  }
  out.push(...a.slice(a.length - tail).map((text) => ({ op: ' ' as const, text })));
  return out;
}
