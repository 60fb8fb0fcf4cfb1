// The coding agents whose lifecycle hooks crux follows (SPEC §10.2), each as data: its event names mapped onto
// crux's four effects, the SessionEnd reasons that mean "completed", and where its settings live.
// Both protocols are public: Claude Code's hooks reference and Gemini CLI's docs/hooks/reference.md.

/** What an event does to the session: create-or-touch, touch and enrich the prompt, touch, close once. */
export type HookEffect = 'start' | 'prompt' | 'touch' | 'end';

export interface HookClient {
  /** The command word: `crux hook <name>`, `crux hook install <name>`. */
  readonly name: string;
  readonly label: string;
  /** The agent identity when neither --agent nor CRUX_AGENT names one. */
  readonly defaultAgent: string;
  /** The events crux acts on, in the order a session meets them; any other event is passed over (exit 0). */
  readonly events: Readonly<Record<string, HookEffect>>;
  /** SessionEnd reasons that mean the user ended the session on purpose; any other is `abandoned`. */
  readonly completedReasons: readonly string[];
  /** For a client whose transcript crux reads (`--record-cases`): the event that ends one of its turns. */
  readonly turnEnd?: string;
  /** The settings file: under the project directory, and under HOME for --user. */
  readonly settingsFile: string;
  /** One handler entry as the client's settings spell it. */
  handler(command: string): Record<string, unknown>;
}

export const CLAUDE_CODE: HookClient = {
  name: 'claude-code',
  label: 'Claude Code',
  defaultAgent: 'claude-code',
  events: {
    SessionStart: 'start',
    UserPromptSubmit: 'prompt',
    Stop: 'touch',
    SubagentStop: 'touch',
    PreCompact: 'touch',
    Notification: 'touch',
    SessionEnd: 'end',
  },
  completedReasons: ['clear', 'logout', 'prompt_input_exit'],
  turnEnd: 'Stop',
  settingsFile: '.claude/settings.json',
  handler: (command) => ({ type: 'command', command }),
};

export const GEMINI_CLI: HookClient = {
  name: 'gemini-cli',
  label: 'Gemini CLI',
  defaultAgent: 'gemini-cli',
  events: {
    SessionStart: 'start',
    BeforeAgent: 'prompt',
    AfterAgent: 'touch',
    PreCompress: 'touch',
    Notification: 'touch',
    SessionEnd: 'end',
  },
  completedReasons: ['exit', 'clear', 'logout', 'prompt_input_exit'],
  settingsFile: '.gemini/settings.json',
  handler: (command) => ({ name: 'crux', type: 'command', command }),
};

export const HOOK_CLIENTS: readonly HookClient[] = [CLAUDE_CODE, GEMINI_CLI];

export const HOOK_CLIENT_NAMES: readonly string[] = HOOK_CLIENTS.map((c) => c.name);
