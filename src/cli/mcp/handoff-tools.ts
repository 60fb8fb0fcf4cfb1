// The handoff tools of `crux mcp` (SPEC §10.1): create_handoff and accept_handoff keep the daemon's names (a
// prompt written for it works), handoff_list shows what was minted and accepted here.
import { durationOr } from '../operations/scope';
import * as handoffOps from '../operations/handoff';
import { renderAccepted, renderList } from '../../output/handoff';
import { invalid } from '../../shared/errors';
import { newId, parseAgentName, parseLogicalSessionId, type HandoffId } from '../../shared/ids';
import { randomBytes } from '../../shared/random';
import { ED25519_ALG, MAC_ALG } from '../../domain/handoff/crypto';
import { MAX_ENVELOPE_BYTES } from '../../domain/handoff/envelope';
import { DEFAULT_MAX_AGE_MS, DEFAULT_TTL_MS } from '../../domain/handoff/store';
import { parseTaskRecord } from '../../domain/handoff/task-record';
import { duration, human, limit, limitOf, listOf, OBJECT, READS, requireAgent, sessionId, sessionKey, tool, WRITES } from './tool';

export const createHandoff = tool({
  name: 'create_handoff',
  title: 'Hand a session off',
  description:
    "Package one of this agent's sessions for another agent, like `crux handoff mint`: the text is the package envelope as a JSON string (give it to the receiver, who passes it to accept_handoff); the session becomes handed_off.",
  ...WRITES,
  input: (z) => ({
    session_id: sessionId(z),
    target_agent: z.string().optional().describe('The only agent that may accept the package.'),
    message: z.string().optional().describe('A note for the receiver (credentials in URLs are removed).'),
    include_facts: z.boolean().optional().describe('Bundle the facts the session refers to.'),
    ttl: duration(z, 'How long the package stays acceptable (default 24h)').optional(),
    task_record: z
      .object({
        requester: z.string().optional(),
        desired_outcome: z.string().optional(),
        sources: z.array(z.string()).optional(),
        acceptance_criteria: z.array(z.string()).optional(),
        boundaries: z.array(z.string()).optional(),
        blocker_rule: z.string().optional(),
      })
      .strict()
      .optional()
      .describe('The task being handed over: who asked, what done looks like, sources, acceptance criteria, boundaries, what to do when blocked.'),
    alg: z.enum([MAC_ALG, ED25519_ALG]).optional().describe(`${MAC_ALG} (the shared key, default) or ${ED25519_ALG} (this agent's own key).`),
  }),
  output: { payload_b64: { type: 'string' }, content_hash: { type: 'string' }, signature_b64: { type: 'string' }, signature_alg: { type: 'string' } },
  exactText: true,
  touches: (args) => [...sessionKey(args.session_id), 'handoffs'],
  run: (ctx, args) =>
    handoffOps.mint(ctx, {
      sessionId: parseLogicalSessionId(args.session_id),
      from: requireAgent(ctx, 'create_handoff'),
      to: args.target_agent === undefined ? null : parseAgentName(args.target_agent),
      message: args.message ?? null,
      ttlMs: durationOr(args.ttl, DEFAULT_TTL_MS, 'ttl'),
      includeFacts: args.include_facts === true,
      taskRecord: args.task_record === undefined ? undefined : parseTaskRecord(args.task_record, 'task_record'),
      alg: args.alg ?? MAC_ALG,
      handoffId: newId<HandoffId>('h', randomBytes(12)),
    }),
  document: (result) => result.envelope,
  text: (result) => result.text,
});

export const acceptHandoff = tool({
  name: 'accept_handoff',
  title: 'Accept a handed-off session',
  description:
    "Verify a package from create_handoff (or `crux handoff mint`, or a Crux daemon) and store its session under this agent's scope, like `crux handoff accept`. Each package is accepted once; a replay is refused (code 8).",
  readOnly: false,
  destructive: true,
  idempotent: false,
  input: (z) => ({
    handoff: z
      .union([z.string(), z.object({ payload_b64: z.string(), content_hash: z.string(), signature_b64: z.string(), signature_alg: z.string() }).passthrough()])
      .describe('The package envelope: the JSON string create_handoff returned, or that object.'),
    max_age: duration(z, 'How old a package without expires_at (a daemon package) may be (default 24h)').optional(),
  }),
  output: { accepted: OBJECT },
  // The session it writes is named inside the package: it waits for every call before it.
  touches: () => 'everything',
  run: async (ctx, args) => {
    const text = typeof args.handoff === 'string' ? args.handoff : JSON.stringify(args.handoff);
    const bytes = Buffer.from(text);
    if (bytes.length > MAX_ENVELOPE_BYTES) throw invalid(`the package is over the limit of ${MAX_ENVELOPE_BYTES} bytes`);
    const receiver = requireAgent(ctx, 'accept_handoff');
    const maxAgeMs = durationOr(args.max_age, DEFAULT_MAX_AGE_MS, 'max_age');
    return handoffOps.accept(ctx, bytes, { receiver, maxAgeMs });
  },
  document: ({ document }) => document,
  text: ({ result }) => renderAccepted(result),
});

export const handoffList = tool({
  name: 'handoff_list',
  title: 'List the handoffs',
  description:
    'The packages minted and accepted here with their status (outstanding, accepted, expired), oldest first, and the trusted Ed25519 keys, like `crux handoff list`.',
  ...READS,
  input: (z) => ({
    status: z
      .union([z.enum(handoffOps.HANDOFF_STATUSES), z.array(z.enum(handoffOps.HANDOFF_STATUSES))])
      .optional()
      .describe('Only handoffs with this status (a list: any of them): outstanding, accepted, expired.'),
    limit: limit(z, 'handoffs, the oldest'),
  }),
  output: { handoffs: { type: 'array', items: OBJECT }, keys: { type: 'array', items: OBJECT } },
  touches: () => ['handoffs'],
  run: (ctx, args) => handoffOps.listHandoffs(ctx, { statuses: listOf(args.status) }, { limit: limitOf(args.limit) }),
  text: human(renderList),
});
