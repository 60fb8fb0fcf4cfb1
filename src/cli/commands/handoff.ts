// `crux handoff …`: thin actions over the handoff store (mint, accept, inspect, list, export, keygen, trust).
// A plain require: esbuild wraps a namespace import in a per-module copy of every fs export.
const fs = require('node:fs') as typeof import('node:fs');
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { buildContext, readInputFile, type Context } from '../context';
import { envCount } from '../parse';
import { emit } from '../../output/emit';
import { inspectJson, renderAccepted, renderInspect, renderKeygen, renderList, renderMinted, renderTrusted } from '../../output/handoff';
import { loadStyle } from '../../output/style';
import { invalid, usage } from '../../shared/errors';
import { newId, parseAgentName, parseLogicalSessionId, type AgentName, type HandoffId } from '../../shared/ids';
import { parseDuration } from '../../shared/time';
import { writePrivateFile } from '../../journal/keys';
import { DEFAULT_MAX_STATE_BYTES } from '../../domain/session/state-document';
import { ED25519_ALG, MAC_ALG, type SignatureAlg } from '../../domain/handoff/crypto';
import { encodeEnvelope, MAX_ENVELOPE_BYTES } from '../../domain/handoff/envelope';
import { mergeTaskRecord, parseTaskRecord, type TaskRecord } from '../../domain/handoff/task-record';
import {
  acceptHandoff, DEFAULT_MAX_AGE_MS, DEFAULT_TTL_MS, exportHandoff, inspectHandoff, keygen, listHandoffs, mintHandoff, trustKey, type HandoffScope,
} from '../../domain/handoff/store';

const scopeOf = (ctx: Context): HandoffScope => ({ dir: ctx.dataDir, now: ctx.now, env: ctx.env, actor: ctx.actor });
const collect = (value: string, previous: string[]) => [...previous, value];

function agentOf(raw: string | undefined, ctx: Context, flag: string): AgentName {
  if (raw !== undefined) return parseAgentName(raw);
  if (ctx.agent !== undefined) return ctx.agent;
  const ways = flag === '--agent' ? '--agent or CRUX_AGENT' : `${flag}, --agent or CRUX_AGENT`;
  throw usage(`${flag} is required`, `name the agent with ${ways}`);
}

function positiveDuration(raw: string | undefined, fallback: number, flag: string): number {
  if (raw === undefined) return fallback;
  const ms = parseDuration(raw, flag);
  if (ms <= 0) throw invalid(`${flag} must be longer than zero`);
  return ms;
}

function readTaskRecord(opts: Record<string, any>): TaskRecord | undefined {
  let base: TaskRecord | undefined;
  if (opts.taskFile !== undefined) {
    const text = readInputFile(opts.taskFile, 1024 * 1024).toString('utf8');
    try {
      base = parseTaskRecord(JSON.parse(text), `--task-file ${opts.taskFile}`);
    } catch (error) {
      if (error instanceof SyntaxError) throw invalid(`--task-file ${opts.taskFile} is not valid JSON (${error.message})`);
      throw error;
    }
  }
  const list = (v: string[]) => (v.length > 0 ? v : undefined);
  return mergeTaskRecord(base, {
    requester: opts.requester, desired_outcome: opts.desiredOutcome, blocker_rule: opts.blockerRule,
    sources: list(opts.source), acceptance_criteria: list(opts.acceptance), boundaries: list(opts.boundary),
  });
}

/** Refuses an --out path whose directory is missing before anything is minted. */
function checkOutPath(out: string | undefined): string | undefined {
  if (out === undefined) return undefined;
  const path = resolve(out);
  if (!fs.existsSync(dirname(path)) || !fs.statSync(dirname(path)).isDirectory()) throw invalid(`--out ${out}: no such directory ${dirname(path)}`);
  if (fs.existsSync(path) && fs.statSync(path).isDirectory()) throw invalid(`--out ${out} is a directory`);
  return path;
}

function writeEnvelope(ctx: Context, envelope: Parameters<typeof encodeEnvelope>[0], out: string | undefined): void {
  const text = `${encodeEnvelope(envelope)}\n`;
  if (out !== undefined) writePrivateFile(out, text);
  // The envelope is the product: printed in both modes (it is itself the JSON document), unless it went to a file.
  if (out === undefined ? !ctx.quiet : ctx.json) process.stdout.write(text);
}

const readPackage = (file: string | undefined) => readInputFile(file ?? '-', MAX_ENVELOPE_BYTES);

export function register(program: Command): void {
  const group = program.command('handoff').description('handoff packages: one agent mints a session, another accepts it (daemon-compatible)');

  group
    .command('mint <session-id>')
    .description("package a session of the source agent's scope; print the envelope, record it, mark the session handed_off")
    .option('--from <agent>', 'the source agent (default: --agent)')
    .option('--to <agent>', 'the only agent that may accept it')
    .option('--message <text>', 'a note for the receiver (URL credentials are removed)')
    .option('--ttl <duration>', 'how long the package stays acceptable (default 24h)')
    .option('--include-facts', 'bundle the facts the session refers to (from facts.jsonl)')
    .option('--task-file <path>', 'a JSON task record: requester, desired_outcome, sources, acceptance_criteria, boundaries, blocker_rule')
    .option('--requester <text>', 'task record: who asked')
    .option('--desired-outcome <text>', 'task record: what done looks like')
    .option('--source <text>', 'task record: a source (repeatable)', collect, [])
    .option('--acceptance <text>', 'task record: an acceptance criterion (repeatable)', collect, [])
    .option('--boundary <text>', 'task record: a boundary (repeatable)', collect, [])
    .option('--blocker-rule <text>', 'task record: what to do when blocked')
    .option('--alg <alg>', `${MAC_ALG} (shared key, default) or ${ED25519_ALG} (the source agent's own key)`, MAC_ALG)
    .option('--out <file>', 'write the envelope to this file (mode 0600) instead of stdout')
    .addHelpText('after', "\nExample:\n  crux handoff mint build-42 --from planner --to builder --message 'tests are green' --out pkg.json")
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.alg !== MAC_ALG && opts.alg !== ED25519_ALG) throw usage(`--alg must be ${MAC_ALG} or ${ED25519_ALG}, not ${JSON.stringify(opts.alg)}`);
      const out = checkOutPath(opts.out);
      const result = await mintHandoff(scopeOf(ctx), {
        sessionId: parseLogicalSessionId(rawId),
        from: agentOf(opts.from, ctx, '--from'),
        to: opts.to === undefined ? null : parseAgentName(opts.to),
        message: opts.message ?? null,
        ttlMs: positiveDuration(opts.ttl, DEFAULT_TTL_MS, '--ttl'),
        includeFacts: opts.includeFacts === true,
        taskRecord: readTaskRecord(opts),
        alg: opts.alg as SignatureAlg,
        handoffId: newId<HandoffId>('h'),
      });
      writeEnvelope(ctx, result.envelope, out);
      if (result.daemonIncompatible !== undefined) ctx.warn(result.daemonIncompatible);
      if (out !== undefined && !ctx.json) await emit(ctx, result, renderMinted(opts.out));
    });

  group
    .command('accept [file]')
    .description('verify a package (file or - for stdin), then store its session under the receiver and its facts')
    .option('--as <agent>', 'the receiving agent (default: --agent)')
    .option('--max-age <duration>', 'how old a package without expires_at (a daemon package) may be (default 24h)')
    .addHelpText('after', '\nExample:\n  crux handoff accept pkg.json --as builder')
    .action(async (file: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const receiver = agentOf(opts.as, ctx, '--as');
      const maxAgeMs = positiveDuration(opts.maxAge, DEFAULT_MAX_AGE_MS, '--max-age');
      const maxStateBytes = envCount(ctx.env, 'CRUX_MAX_STATE_BYTES', DEFAULT_MAX_STATE_BYTES)!;
      const result = await acceptHandoff(scopeOf(ctx), readPackage(file), { receiver, maxAgeMs, maxStateBytes });
      await emit(ctx, { accepted: result.accepted }, () => renderAccepted(result));
    });

  group
    .command('inspect [file]')
    .description('decode a package without trusting it; show every field and each check; change nothing (exit 6/7/8 when a check fails)')
    .option('--as <agent>', 'check the target against this receiver (default: --agent)')
    .option('--max-age <duration>', 'as for accept (default 24h)')
    .addHelpText('after', '\nExample:\n  crux handoff inspect pkg.json --as builder')
    .action(async (file: string | undefined, opts, command: Command) => {
      const ctx = buildContext(command);
      const receiver = opts.as !== undefined ? parseAgentName(opts.as) : ctx.agent;
      const maxAgeMs = positiveDuration(opts.maxAge, DEFAULT_MAX_AGE_MS, '--max-age');
      const result = inspectHandoff(scopeOf(ctx), readPackage(file), { receiver, maxAgeMs });
      if (ctx.json) process.stdout.write(`${inspectJson(result)}\n`);
      else if (!ctx.quiet) process.stdout.write(`${renderInspect(result, await loadStyle(ctx.color))}\n`);
      if (result.failure !== undefined) throw result.failure;
    });

  group
    .command('list')
    .alias('ls')
    .description('minted and accepted handoffs with their status (outstanding, accepted, expired)')
    .addHelpText('after', '\nExample:\n  crux --json handoff list')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const rows = listHandoffs(scopeOf(ctx));
      await emit(ctx, { handoffs: rows }, ({ handoffs }, style) => renderList(handoffs, style));
    });

  group
    .command('export <id>')
    .description('print again the envelope of a package minted here (by handoff id or content hash)')
    .option('--out <file>', 'write it to this file (mode 0600)')
    .addHelpText('after', '\nExample:\n  crux handoff export h_c427cb14420812e723ce3c77 --out pkg.json')
    .action(async (id: string, opts, command: Command) => {
      const ctx = buildContext(command);
      const out = checkOutPath(opts.out);
      writeEnvelope(ctx, exportHandoff(scopeOf(ctx), id).envelope, out);
    });

  group
    .command('keygen')
    .description("create the agent's Ed25519 key (keys/, 0600) for --alg ed25519, trust it here, print the public key")
    .addHelpText('after', '\nExample:\n  crux handoff keygen --agent planner')
    .action(async (_opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await keygen(scopeOf(ctx), agentOf(undefined, ctx, '--agent'));
      await emit(ctx, { agent: result.key.agent, public_key: result.key.public_key, key_id: result.key.key_id, created: result.key.created }, () => renderKeygen(result));
    });

  group
    .command('trust <public-key>')
    .description("trust an agent's Ed25519 public key (as `keygen` printed it) for packages it signs")
    .addHelpText('after', "\nExample:\n  crux handoff trust 'ed25519:oFPD19R33y/DQ5n88Pyn/fPGSxbpPmvSov7H57/UNZo=' --agent planner")
    .action(async (publicKey: string, _opts, command: Command) => {
      const ctx = buildContext(command);
      const result = await trustKey(scopeOf(ctx), agentOf(undefined, ctx, '--agent'), publicKey);
      await emit(ctx, { trusted: result }, () => renderTrusted(result));
    });
}
