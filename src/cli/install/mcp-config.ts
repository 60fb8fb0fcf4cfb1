// crux's server entry merged into, or taken out of, an MCP client's configuration text (JSON `mcpServers`, or
// Codex's TOML `[mcp_servers.crux]`), keeping every other entry. Pure: text in, text out.
import { isDeepStrictEqual } from 'node:util';
import { basename } from 'node:path';
import { invalid } from '../../shared/errors';
import { isTable, parseJsonObject as parseJson, type Table } from '../parse';

/** The name of crux's entry in every client's server table. */
const SERVER_NAME = 'crux';

export interface ConfigEdit {
  /** The text to write (or the original text, unchanged). */
  readonly text: string;
  readonly changed: boolean;
  /** Uninstall only: a `crux` entry was there that crux did not install (it runs something else), and was kept. */
  readonly foreign?: boolean;
  /** TOML only: the library had to write the whole file anew, so its comments and layout were not kept. */
  readonly reformatted?: boolean;
}

/** An entry crux installed (or one made by hand the same way): it runs crux's `mcp` command. */
export function isCruxServer(entry: unknown): boolean {
  if (!isTable(entry) || typeof entry.command !== 'string') return false;
  const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
  const words = [entry.command, ...args];
  return words.some((w) => /^crux(\.cmd|\.exe|\.cjs)?$/.test(basename(w.replace(/\\/g, '/')))) && words.includes('mcp');
}

/** The table that holds the servers, made when absent; refused when it is not a table. */
function serversOf(doc: Table, key: string, where: string, create: boolean): Table | undefined {
  const servers = doc[key];
  if (servers === undefined) {
    if (!create) return undefined;
    doc[key] = {};
    return doc[key] as Table;
  }
  if (!isTable(servers)) throw invalid(`${where}: "${key}" is not a table of servers`, 'fix it by hand; nothing was written');
  return servers;
}

const jsonText = (doc: Table) => `${JSON.stringify(doc, null, 2)}\n`;

/** Sets `mcpServers.crux` to `entry`; the same entry already there changes nothing. */
export function mergeJsonServer(text: string, entry: Table, where: string): ConfigEdit {
  const doc = parseJson(text, where);
  const servers = serversOf(doc, 'mcpServers', where, true)!;
  if (isDeepStrictEqual(servers[SERVER_NAME], entry)) return { text, changed: false };
  servers[SERVER_NAME] = entry;
  return { text: jsonText(doc), changed: true };
}

/** Takes crux's entry out; a `mcpServers` left empty goes too. Absent: nothing changes. */
export function removeJsonServer(text: string, where: string): ConfigEdit {
  const doc = parseJson(text, where);
  const servers = serversOf(doc, 'mcpServers', where, false);
  if (servers === undefined || !Object.hasOwn(servers, SERVER_NAME)) return { text, changed: false };
  if (!isCruxServer(servers[SERVER_NAME])) return { text, changed: false, foreign: true };
  delete servers[SERVER_NAME];
  if (Object.keys(servers).length === 0) delete doc.mcpServers;
  return { text: jsonText(doc), changed: true };
}

type Toml = typeof import('smol-toml');
// Loaded only by `crux mcp install codex`: a bundle of its own (dist/toml.cjs), see build.mjs.
const loadToml = (): Toml => require('smol-toml') as Toml;

function parseToml(toml: Toml, text: string, where: string): Table {
  try {
    return toml.parse(text, { integersAsBigInt: 'asNeeded' }) as Table;
  } catch (error) {
    throw invalid(`${where} is not valid TOML (${(error as Error).message.split('\n')[0]})`, 'fix or move it; nothing was written');
  }
}

/** A table header that opens crux's entry or one of its sub-tables: `[mcp_servers.crux]`, `[mcp_servers."crux".env]`. */
const CRUX_HEADER = /^\s*\[\s*mcp_servers\s*\.\s*(?:crux|"crux"|'crux')\s*(?:\]|\.)/;
const ANY_HEADER = /^\s*\[/;

/** The text without the sections that crux's table headers open (each up to the next header). */
function withoutCruxSections(text: string): string {
  const kept: string[] = [];
  let skipping = false;
  for (const line of text.split(/(?<=\n)/)) {
    if (CRUX_HEADER.test(line)) skipping = true;
    else if (ANY_HEADER.test(line)) skipping = false;
    if (!skipping) kept.push(line);
  }
  const rest = kept.join('');
  // crux's section was last: the blank line install put before it goes with it.
  return skipping ? rest.replace(/\n\s*$/, '\n').replace(/^\s+$/, '') : rest;
}

/** A TOML value as plain data (the library's tables have no prototype, its dates are objects): comparable. */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return { bigint: String(value) };
  if (value instanceof Date) return { date: String(value) };
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const sameToml = (a: unknown, b: unknown) => isDeepStrictEqual(plain(a), plain(b));

/** A document without crux's server (and without a server table that held only it): what must survive untouched. */
function othersOf(doc: Table): Table {
  const copy = { ...doc };
  if (isTable(copy.mcp_servers)) {
    const { [SERVER_NAME]: _crux, ...rest } = copy.mcp_servers;
    if (Object.keys(rest).length === 0) delete copy.mcp_servers;
    else copy.mcp_servers = rest;
  }
  return copy;
}

/**
 * Codex's config.toml with crux's `[mcp_servers.crux]` set to `entry` (or taken out when `entry` is undefined).
 * The edit is made on the text, so every comment and layout stays, and proven by parsing the result: every other
 * entry equal, crux's as wanted. Where crux's entry is spelled otherwise (inline, dotted keys), the library
 * writes the whole document anew, keeping every entry but not the comments.
 */
export function editTomlServer(text: string, entry: Table | undefined, where: string): ConfigEdit {
  const toml = loadToml();
  const doc = parseToml(toml, text, where);
  const servers = serversOf(doc, 'mcp_servers', where, false);
  const current = servers?.[SERVER_NAME];
  if (entry === undefined) {
    if (current === undefined) return { text, changed: false };
    if (!isCruxServer(current)) return { text, changed: false, foreign: true };
  } else if (sameToml(current, entry)) return { text, changed: false };
  const others = othersOf(doc);
  const base = withoutCruxSections(text);
  const section = entry === undefined ? '' : toml.stringify({ mcp_servers: { [SERVER_NAME]: entry } });
  const edited = section === '' ? base : `${base}${base === '' || base.endsWith('\n\n') ? '' : base.endsWith('\n') ? '\n' : '\n\n'}${section}`;
  const proof = (() => {
    try {
      return toml.parse(edited, { integersAsBigInt: 'asNeeded' }) as Table;
    } catch {
      return undefined;
    }
  })();
  const wanted = (d: Table) => (isTable(d.mcp_servers) ? d.mcp_servers[SERVER_NAME] : undefined);
  if (proof !== undefined && sameToml(othersOf(proof), others) && sameToml(wanted(proof), entry)) return { text: edited, changed: true };
  const whole = entry === undefined ? others : { ...others, mcp_servers: { ...(isTable(others.mcp_servers) ? others.mcp_servers : {}), [SERVER_NAME]: entry } };
  return { text: toml.stringify(whole), changed: true, reformatted: true };
}
