// A transcript folded into turns: each prompt the user typed, with what was done until the next one (tools
// used, commands run, files changed, results, the model's last words), bounded however long the session ran.
import { entriesOf, type TranscriptEntry } from './entries';

/** Tools whose `file_path` (NotebookEdit: `notebook_path`) names a file they change. */
const FILE_TOOLS: Readonly<Record<string, string>> = { Edit: 'file_path', MultiEdit: 'file_path', Write: 'file_path', NotebookEdit: 'notebook_path' };
/** Distinct commands and files one turn keeps; past this, only counted (a case shows fewer still). */
export const KEPT_PER_TURN = 100;
const KEPT_REPLY_CHARS = 1000;

export interface Turn {
  /** What identifies the prompt: its uuid, else its place and text (a transcript without uuids). */
  readonly key: string;
  readonly prompt: string;
  readonly ts: string | null;
  /** The session the prompt was typed in (a resumed session's transcript begins with its earlier one's). */
  readonly sessionId: string | null;
  readonly tools: Map<string, number>;
  readonly commands: string[];
  readonly files: string[];
  /** Distinct commands and files past KEPT_PER_TURN. */
  moreCommands: number;
  moreFiles: number;
  results: number;
  errors: number;
  /** The last Bash command of the turn and whether its result was an error (null: no result seen). */
  lastCommand: { readonly command: string; error: boolean | null } | null;
  lastResultError: boolean | null;
  reply: string | null;
  interrupted: boolean;
}

export const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Folds parsed transcript lines, one at a time (a file is streamed through it, never held whole). */
export class TranscriptFold {
  readonly turns: Turn[] = [];
  private readonly toolUses = new Map<string, { bash: string | null }>();
  private readonly results = new Set<string>();
  private prompts = 0;

  add(line: unknown): void {
    for (const entry of entriesOf(line)) this.apply(entry);
  }

  private apply(entry: TranscriptEntry): void {
    if (entry.kind === 'prompt') {
      this.prompts += 1;
      this.turns.push(newTurn(entry.uuid ?? `#${this.prompts}:${entry.text}`, entry.text, entry.ts, entry.sessionId));
      return;
    }
    const turn = this.turns.at(-1);
    // Work before the first prompt (a transcript that begins mid-conversation) belongs to no turn.
    if (turn === undefined) return;
    switch (entry.kind) {
      case 'tool_use': {
        // Claude Code may write one model message over several lines; a tool call counts once by its id.
        if (entry.id !== null && this.toolUses.has(entry.id)) return;
        const command = entry.name === 'Bash' && typeof entry.input.command === 'string' ? collapse(entry.input.command) : null;
        if (entry.id !== null) this.toolUses.set(entry.id, { bash: command });
        turn.tools.set(entry.name, (turn.tools.get(entry.name) ?? 0) + 1);
        if (command !== null && command !== '') {
          turn.lastCommand = { command, error: null };
          if (keep(turn.commands, command)) turn.moreCommands += 1;
        }
        const field = FILE_TOOLS[entry.name];
        const file = field === undefined ? undefined : entry.input[field];
        if (typeof file === 'string' && file !== '' && keep(turn.files, file)) turn.moreFiles += 1;
        return;
      }
      case 'tool_result': {
        if (entry.toolUseId !== null) {
          if (this.results.has(entry.toolUseId)) return;
          this.results.add(entry.toolUseId);
        }
        turn.results += 1;
        if (entry.isError) turn.errors += 1;
        turn.lastResultError = entry.isError;
        const use = entry.toolUseId === null ? undefined : this.toolUses.get(entry.toolUseId);
        if (use?.bash != null && turn.lastCommand !== null && turn.lastCommand.command === use.bash) turn.lastCommand.error = entry.isError;
        return;
      }
      case 'reply':
        turn.reply = entry.text.length > KEPT_REPLY_CHARS ? entry.text.slice(0, KEPT_REPLY_CHARS) : entry.text;
        turn.interrupted = false;
        return;
      case 'interrupted':
        turn.interrupted = true;
        return;
    }
  }
}

function newTurn(key: string, prompt: string, ts: string | null, sessionId: string | null): Turn {
  return {
    key,
    prompt,
    ts,
    sessionId,
    tools: new Map(),
    commands: [],
    files: [],
    moreCommands: 0,
    moreFiles: 0,
    results: 0,
    errors: 0,
    lastCommand: null,
    lastResultError: null,
    reply: null,
    interrupted: false,
  };
}

/**
 * The turns of session `sessionId`: Claude Code starts a resumed session's transcript (a new session id) with
 * the earlier session's lines, whose prompts are that session's to record. A transcript none of whose prompts
 * names the session (no sessionId fields, or another's) is taken whole.
 */
export function turnsOf(turns: readonly Turn[], sessionId: string): readonly Turn[] {
  const own = turns.filter((t) => t.sessionId === sessionId);
  return own.length > 0 ? own : turns;
}

/** Adds `value` to a distinct list unless there; answers true when it was new but the list is full. */
function keep(list: string[], value: string): boolean {
  if (list.includes(value)) return false;
  if (list.length >= KEPT_PER_TURN) return true;
  list.push(value);
  return false;
}

/** The prompt one parsed line holds, if it is one the user typed: its text and uuid. */
export function promptIn(line: unknown): { readonly text: string; readonly uuid: string | null } | undefined {
  const prompt = entriesOf(line).find((e) => e.kind === 'prompt');
  return prompt?.kind === 'prompt' ? { text: prompt.text, uuid: prompt.uuid } : undefined;
}
