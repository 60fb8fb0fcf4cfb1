// `crux handoff mint <session-id>`: package a session, print (or write) the envelope, mark it handed_off.
import { Command, Option } from 'commander';
import { completingWith } from '../group';
import { collect } from '../list-options';
import { buildContext, readInputFile } from '../../context';
import { emit } from '../../../output/emit';
import { renderMinted } from '../../../output/handoff';
import { invalid, usage } from '../../../shared/errors';
import { newId, parseAgentName, parseLogicalSessionId, type HandoffId } from '../../../shared/ids';
import { randomBytes } from '../../../shared/random';
import { ED25519_ALG, MAC_ALG, type SignatureAlg } from '../../../domain/handoff/crypto';
import { mergeTaskRecord, parseTaskRecord, type TaskRecord } from '../../../domain/handoff/task-record';
import { DEFAULT_TTL_MS } from '../../../domain/handoff/store';
import { mint } from '../../operations/handoff';
import { checkOutPath, writeEnvelope } from './envelope-io';
import { agentOf, durationOr } from '../../operations/scope';

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
    requester: opts.requester,
    desired_outcome: opts.desiredOutcome,
    blocker_rule: opts.blockerRule,
    sources: list(opts.source),
    acceptance_criteria: list(opts.acceptance),
    boundaries: list(opts.boundary),
  });
}

export function makeMintCommand(): Command {
  return new Command('mint')
    .arguments('<session-id>')
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
    .addOption(
      completingWith(new Option('--alg <alg>', `${MAC_ALG} (shared key, default) or ${ED25519_ALG} (the source agent's own key)`).default(MAC_ALG), [
        MAC_ALG,
        ED25519_ALG,
      ]),
    )
    .option('--out <file>', 'write the envelope to this file instead of stdout, as > does (a new file: mode 0600; - is stdout)')
    .addHelpText('after', "\nExample:\n  crux handoff mint build-42 --from planner --to builder \\\n    --message 'tests are green' --out pkg.json")
    .action(async (rawId: string, opts, command: Command) => {
      const ctx = buildContext(command);
      if (opts.alg !== MAC_ALG && opts.alg !== ED25519_ALG) throw usage(`--alg must be ${MAC_ALG} or ${ED25519_ALG}, not ${JSON.stringify(opts.alg)}`);
      const out = checkOutPath(opts.out);
      const result = await mint(ctx, {
        sessionId: parseLogicalSessionId(rawId),
        from: agentOf(opts.from, ctx, '--from'),
        to: opts.to === undefined ? null : parseAgentName(opts.to),
        message: opts.message ?? null,
        ttlMs: durationOr(opts.ttl, DEFAULT_TTL_MS, '--ttl'),
        includeFacts: opts.includeFacts === true,
        taskRecord: readTaskRecord(opts),
        alg: opts.alg as SignatureAlg,
        handoffId: newId<HandoffId>('h', randomBytes(12)),
      });
      const written = writeEnvelope(ctx, result.envelope, out, result.minted.handoff_id);
      // With --out, --quiet prints the new package's id (what was created); stdout is free for it.
      if (out?.kind === 'file' && !ctx.json && (written || ctx.quiet)) await emit(ctx, result, renderMinted(out.shown), (r) => [r.minted.handoff_id]);
    });
}
