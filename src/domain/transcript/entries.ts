// One line of a Claude Code transcript (its JSONL, parsed) as what crux reads of it: a prompt the user typed,
// a tool the model called, a tool's result, the model's text, an interruption; everything else is nothing.
//
// The shape, as Claude Code writes it: `type` "user" | "assistant" | "summary" | "system" | …; `message.content`
// a string or blocks (`text`, `tool_use` {id, name, input}, `tool_result` {tool_use_id, content, is_error},
// `thinking`, `image`); `uuid`, `parentUuid`, `sessionId`, `cwd`, `timestamp`; `isSidechain` for a subagent's
// turn; `isMeta` for lines Claude Code wrote itself (caveats, hook feedback); `isCompactSummary` for the
// model's summary that a compaction puts where the conversation was.

export type TranscriptEntry =
  | { readonly kind: 'prompt'; readonly uuid: string | null; readonly text: string; readonly ts: string | null; readonly sessionId: string | null }
  | { readonly kind: 'tool_use'; readonly id: string | null; readonly name: string; readonly input: Readonly<Record<string, unknown>> }
  | { readonly kind: 'tool_result'; readonly toolUseId: string | null; readonly isError: boolean }
  | { readonly kind: 'reply'; readonly text: string }
  | { readonly kind: 'interrupted' };

// User lines that the user did not type as a prompt: slash commands and their output, `!` shell input and
// its output (Claude Code wraps each in these tags).
const NOT_A_PROMPT =
  /^<(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|user-memory-input)>/;
// What Claude Code writes as a user line when the user pressed Esc mid-turn.
const INTERRUPTED = /^\[Request interrupted by user[^\]]*\]$/;

const NOTHING: readonly TranscriptEntry[] = [];

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function userEntries(line: Record<string, unknown>, content: unknown): readonly TranscriptEntry[] {
  if (line.isMeta === true || line.isCompactSummary === true || line.isVisibleInTranscriptOnly === true) return NOTHING;
  let texts: string[];
  if (typeof content === 'string') texts = [content];
  else if (Array.isArray(content)) {
    const results = content.filter((b) => isObject(b) && b.type === 'tool_result') as Record<string, unknown>[];
    // Tool results come back as user lines; text beside them is Claude Code's, not a prompt.
    if (results.length > 0) return results.map((b) => ({ kind: 'tool_result', toolUseId: str(b.tool_use_id), isError: b.is_error === true }));
    texts = content.flatMap((b) => (isObject(b) && b.type === 'text' && typeof b.text === 'string' ? [b.text] : []));
  } else return NOTHING;
  const text = texts.join('\n').trim();
  if (text === '') return NOTHING;
  if (INTERRUPTED.test(text)) return [{ kind: 'interrupted' }];
  if (NOT_A_PROMPT.test(text)) return NOTHING;
  return [{ kind: 'prompt', uuid: str(line.uuid), text, ts: str(line.timestamp), sessionId: str(line.sessionId) }];
}

function assistantEntries(content: unknown): readonly TranscriptEntry[] {
  if (typeof content === 'string') return content.trim() === '' ? NOTHING : [{ kind: 'reply', text: content.trim() }];
  if (!Array.isArray(content)) return NOTHING;
  const out: TranscriptEntry[] = [];
  for (const b of content) {
    if (!isObject(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string' && b.text.trim() !== '') out.push({ kind: 'reply', text: b.text.trim() });
    else if (b.type === 'tool_use' && typeof b.name === 'string')
      out.push({ kind: 'tool_use', id: str(b.id), name: b.name, input: isObject(b.input) ? b.input : {} });
  }
  return out;
}

/** What one parsed transcript line says; a subagent's lines (isSidechain) and unknown types say nothing. */
export function entriesOf(line: unknown): readonly TranscriptEntry[] {
  if (!isObject(line) || line.isSidechain === true || !isObject(line.message)) return NOTHING;
  if (line.type === 'user') return userEntries(line, line.message.content);
  if (line.type === 'assistant') return assistantEntries(line.message.content);
  return NOTHING;
}
