// Merging crux's hook entries into, and taking them out of, a coding agent's settings document (Claude Code's,
// Gemini CLI's: the same shape), keeping every other setting and hook. Pure: text in, text out; the commands
// `crux hook install` and `crux hook uninstall` do the file.
import { invalid } from '../../shared/errors';
import type { HookClient } from './clients';
import { isTable as isObject, parseJsonObject as parseSettings } from '../parse';

/**
 * A command of ours for `client` (`crux hook …`, or by absolute paths `/usr/bin/node /…/bin/crux.cjs … hook …`),
 * whatever flags it was installed with: replaced by the new one, never duplicated.
 */
const oursFor = (client: HookClient) => new RegExp(`(^|[\\s/'"])crux(\\.cjs)?['"]?(\\s.*)?\\shook\\s+${client.name}(\\s|$)`);

export interface MergeResult {
  /** The settings to write (two-space JSON and a newline), or the original text when nothing changed. */
  readonly text: string;
  readonly changed: boolean;
  /** The events whose entry was added or updated. */
  readonly events: string[];
}

/** Adds `command` as a hook of every event crux acts on; an entry of ours already there is updated in place. */
export function mergeHooks(client: HookClient, existing: string, command: string, where: string): MergeResult {
  const OURS = oursFor(client);
  const settings = parseSettings(existing, where);
  const hooks = settings.hooks ?? {};
  if (!isObject(hooks)) throw invalid(`${where}: "hooks" is not an object`, 'nothing was written');
  const events: string[] = [];
  for (const event of Object.keys(client.events)) {
    const groups = hooks[event] ?? [];
    if (!Array.isArray(groups)) throw invalid(`${where}: hooks.${event} is not a list`, 'nothing was written');
    const handlers = groups.flatMap((g) => (isObject(g) && Array.isArray(g.hooks) ? (g.hooks as unknown[]).filter(isObject) : []));
    const ours = handlers.filter((h) => h.type === 'command' && typeof h.command === 'string' && OURS.test(h.command));
    if (ours.length === 1 && ours[0]!.command === command) continue;
    if (ours.length > 0) {
      // Update the first of ours, drop any others (an older install, a hand-made copy).
      ours[0]!.command = command;
      const extra = ours.slice(1);
      const emptied = new Set<unknown>();
      for (const group of groups) {
        if (!isObject(group) || !Array.isArray(group.hooks) || !group.hooks.some((h) => extra.includes(h))) continue;
        const kept = group.hooks.filter((h) => !extra.includes(h));
        group.hooks = kept;
        if (kept.length === 0) emptied.add(group);
      }
      hooks[event] = groups.filter((g) => !emptied.has(g));
    } else {
      hooks[event] = [...groups, { hooks: [client.handler(command)] }];
    }
    events.push(event);
  }
  if (events.length === 0) return { text: existing, changed: false, events };
  settings.hooks = hooks;
  return { text: `${JSON.stringify(settings, null, 2)}\n`, changed: true, events };
}

/** Takes out every handler of ours for `client` (whatever flags it was installed with); groups, events and a
 * `hooks` left empty go too, so that an install followed by an uninstall leaves the settings as they were. */
export function removeHooks(client: HookClient, existing: string, where: string): MergeResult {
  const OURS = oursFor(client);
  const settings = parseSettings(existing, where);
  const hooks = settings.hooks;
  if (hooks === undefined) return { text: existing, changed: false, events: [] };
  if (!isObject(hooks)) throw invalid(`${where}: "hooks" is not an object`, 'nothing was written');
  const isOurs = (h: unknown) => isObject(h) && h.type === 'command' && typeof h.command === 'string' && OURS.test(h.command);
  const events: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups) || !groups.some((g) => isObject(g) && Array.isArray(g.hooks) && g.hooks.some(isOurs))) continue;
    const kept = groups.flatMap((g) => {
      if (!isObject(g) || !Array.isArray(g.hooks) || !g.hooks.some(isOurs)) return [g];
      const rest = g.hooks.filter((h) => !isOurs(h));
      return rest.length === 0 ? [] : [{ ...g, hooks: rest }];
    });
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
    events.push(event);
  }
  if (events.length === 0) return { text: existing, changed: false, events };
  if (Object.keys(hooks).length === 0) delete settings.hooks;
  return { text: `${JSON.stringify(settings, null, 2)}\n`, changed: true, events };
}
