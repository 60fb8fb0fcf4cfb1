// A stretch of a transcript as one case (SPEC §10.2, §5): the prompts since the last case recorded for the
// session, what was done, how it ended. Deterministic: the same transcript and ending make the same case,
// under an id derived from the session and the stretch's last prompt, so a stretch is recorded once.
import type { CaseId } from '../../shared/ids';
import { sha256Hex } from '../../shared/sha256';
import { collapse, type Turn } from './turns';

/**
 * What ends the recording: the session (with Claude Code's reason), or a turn of a session going on (Stop):
 * then the last turn stays open (its lines may still be on their way to the file, and the session's end will
 * give it its reason), and what is recorded is the stretch a newer prompt closed.
 */
export type Ending = { readonly kind: 'session'; readonly reason: string; readonly completed: boolean } | { readonly kind: 'turn' };

export interface StretchSource {
  readonly client: string;
  /** The scoped session key (agent and id): two agents' sessions of one id are different stretches. */
  readonly sessionKey: string;
  readonly sessionId: string;
  readonly cwd: string | null;
  readonly project: string | null;
}

/** Bounds of what one case holds, in UTF-16 units: the case stays small however long the session was. */
const PROMPT_CHARS = 1000;
const TASK_CHARS = 4000;
const COMMAND_CHARS = 200;
const SHOWN_COMMANDS = 15;
const SHOWN_FILES = 25;
const REPLY_CHARS = 400;

/** The case id of the stretch that ends with `turn`: the same for every process that reads that stretch. */
export function stretchCaseId(source: StretchSource, turn: Pick<Turn, 'key'>): CaseId {
  return `c_${sha256Hex(`${source.client}\n${source.sessionKey}\n${turn.key}`).slice(0, 24)}` as CaseId;
}

/** The turns not yet in a case: those after the last turn whose stretch case the bank has held. */
export function openStretch(turns: readonly Turn[], source: StretchSource, held: (id: CaseId) => boolean): readonly Turn[] {
  for (let i = turns.length - 1; i >= 0; i--) if (held(stretchCaseId(source, turns[i]!))) return turns.slice(i + 1);
  return turns;
}

/** The turns to record now: the open stretch, less its last turn at a turn's end. */
export function stretchToRecord(turns: readonly Turn[], source: StretchSource, ending: Ending, held: (id: CaseId) => boolean): readonly Turn[] {
  const open = openStretch(turns, source, held);
  return ending.kind === 'turn' ? open.slice(0, -1) : open;
}

/** Shortens to `max` units without splitting a surrogate pair, marking the cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max - 1;
  const unit = text.charCodeAt(cut - 1);
  if (unit >= 0xd800 && unit <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut)}…`;
}

function listed(items: readonly string[], shown: number, more: number): string {
  const rest = items.length - shown + more;
  return items.slice(0, shown).join('; ') + (rest > 0 ? `; … (+${rest} more)` : '');
}

function task(turns: readonly Turn[]): string {
  let out = '';
  for (const [i, turn] of turns.entries()) {
    const next = clip(turn.prompt, PROMPT_CHARS);
    if (out.length + next.length + 1 > TASK_CHARS) return `${out}\n… (+${turns.length - i} more prompts)`;
    out += (i === 0 ? '' : '\n') + next;
  }
  return out;
}

function action(turns: readonly Turn[], cwd: string | null): string {
  const tools = new Map<string, number>();
  const commands: string[] = [];
  const files: string[] = [];
  let more = { commands: 0, files: 0 };
  const within = (file: string) => (cwd !== null && cwd !== '/' && file.startsWith(`${cwd}/`) ? file.slice(cwd.length + 1) : file);
  for (const turn of turns) {
    for (const [name, n] of turn.tools) tools.set(name, (tools.get(name) ?? 0) + n);
    for (const c of turn.commands) if (!commands.includes(c)) commands.push(c);
    for (const f of turn.files.map(within)) if (!files.includes(f)) files.push(f);
    more = { commands: more.commands + turn.moreCommands, files: more.files + turn.moreFiles };
  }
  if (tools.size === 0) return 'answered without tools';
  const byUse = [...tools].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  const lines = [`tools: ${byUse.map(([name, n]) => `${name} ×${n}`).join(', ')}`];
  if (commands.length > 0)
    lines.push(
      `commands: ${listed(
        commands.map((c) => clip(c, COMMAND_CHARS)),
        SHOWN_COMMANDS,
        more.commands,
      )}`,
    );
  if (files.length > 0) lines.push(`files changed: ${listed(files, SHOWN_FILES, more.files)}`);
  return lines.join('\n');
}

/** The outcome text and success: the ending, the tool results, the last command, the model's last words. */
function outcome(turns: readonly Turn[], ending: Ending, label: string): { text: string; success: boolean } {
  const results = turns.reduce((n, t) => n + t.results, 0);
  const errors = turns.reduce((n, t) => n + t.errors, 0);
  const last = turns.at(-1)!;
  const lastCommand = turns.findLast((t) => t.lastCommand !== null)?.lastCommand ?? null;
  const lastResultError = turns.findLast((t) => t.lastResultError !== null)?.lastResultError ?? null;
  // The last command's result decides when a command ran; else the last tool result.
  const failedLast = lastCommand !== null ? lastCommand.error === true : lastResultError === true;
  const parts = [ending.kind === 'session' ? `${label} session ended (reason: ${ending.reason})` : `${label} session went on to a new prompt`];
  if (last.interrupted) parts.push('interrupted by the user');
  if (results > 0) parts.push(`${results} tool result${results === 1 ? '' : 's'}, ${errors} error${errors === 1 ? '' : 's'}`);
  if (lastCommand !== null) {
    const how = lastCommand.error === null ? 'no result seen' : lastCommand.error ? 'failed' : 'succeeded';
    parts.push(`last command \`${clip(lastCommand.command, COMMAND_CHARS)}\` ${how}`);
  }
  let text = parts.join('; ');
  if (last.reply !== null) text += `\nlast reply: ${clip(collapse(last.reply), REPLY_CHARS)}`;
  const completed = ending.kind === 'turn' || ending.completed;
  return { text, success: completed && !last.interrupted && !failedLast };
}

/** The case fields of a stretch (validated and scrubbed where every case is: parseCaseDraft). */
export function stretchCase(turns: readonly Turn[], ending: Ending, source: StretchSource, label: string) {
  const last = turns.at(-1);
  if (last === undefined) return undefined;
  const { text, success } = outcome(turns, ending, label);
  const where = source.cwd === null ? '' : ` in ${source.cwd}`;
  return {
    caseId: stretchCaseId(source, last),
    fields: {
      task: task(turns).toWellFormed(),
      context: `${label} session ${source.sessionId}${where}, ${turns.length} prompt${turns.length === 1 ? '' : 's'}`.toWellFormed(),
      action: action(turns, source.cwd).toWellFormed(),
      outcome: text.toWellFormed(),
      success,
      tags: source.project === null ? [] : [source.project.toWellFormed()],
      source_receipt: `${source.client}:${source.sessionId}${last.key.startsWith('#') ? '' : `:${last.key}`}`.toWellFormed(),
    },
  };
}
