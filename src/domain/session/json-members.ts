// The raw text of a JSON object's top-level members, so a state can be carried without re-encoding it.
//
// The caller has already validated the text with JSON.parse; this only finds spans. It is iterative (no
// recursion), so a deeply nested state cannot overflow the stack.

const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipWs(text: string, pos: number): number {
  while (pos < text.length && isWs(text.charCodeAt(pos))) pos += 1;
  return pos;
}

/** The index just past the string token that starts at `pos` (a `"`). */
function skipString(text: string, pos: number): number {
  for (let i = pos + 1; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 1;
    else if (c === 0x22) return i + 1;
  }
  return text.length;
}

/** The index just past the value that starts at `pos`. */
function skipValue(text: string, pos: number): number {
  const first = text[pos];
  if (first === '"') return skipString(text, pos);
  if (first !== '{' && first !== '[') {
    let i = pos;
    while (i < text.length && !',}]'.includes(text[i]!) && !isWs(text.charCodeAt(i))) i += 1;
    return i;
  }
  let depth = 0;
  for (let i = pos; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') i = skipString(text, i) - 1;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/** Each top-level member of a valid JSON object text: its key and the raw text of its value (last one wins). */
export function rawMembers(objectText: string): Map<string, string> {
  const members = new Map<string, string>();
  let pos = skipWs(objectText, 0);
  if (objectText[pos] !== '{') return members;
  pos = skipWs(objectText, pos + 1);
  while (pos < objectText.length && objectText[pos] === '"') {
    const keyEnd = skipString(objectText, pos);
    const key = JSON.parse(objectText.slice(pos, keyEnd)) as string;
    pos = skipWs(objectText, skipWs(objectText, keyEnd) + 1);
    const end = skipValue(objectText, pos);
    members.set(key, objectText.slice(pos, end));
    pos = skipWs(objectText, end);
    if (objectText[pos] === ',') pos = skipWs(objectText, pos + 1);
  }
  return members;
}
