// The tools of `crux mcp`, in the order of SPEC §10.1's table: each parses its arguments, runs the same
// operation as its CLI command and answers with that command's --json document as structuredContent.
import { checkJournals } from '../operations/journal';
import { renderCheck } from '../../output/journal';
import { acceptHandoff, createHandoff, handoffList } from './handoff-tools';
import { caseList, caseRecord, caseRetrieve, caseShow } from './case-tools';
import { sessionArchive, sessionClose, sessionGet, sessionHistory, sessionList, sessionPut, sessionUnarchive } from './session-tools';
import { human, OBJECT, READS, type Tool, tool } from './tool';

const journalCheck = tool({
  name: 'journal_check',
  title: 'Check the journals',
  description: 'Verify every record, the hash chain and the sequence of each journal, like `crux journal check` (healthy false when one is damaged).',
  ...READS,
  input: () => ({}),
  output: { healthy: { type: 'boolean' }, journals: { type: 'array', items: OBJECT }, secrets: { type: 'array', items: OBJECT } },
  touches: () => 'everything',
  run: (ctx) => checkJournals(ctx, { repair: false }),
  text: human(renderCheck),
});

export const TOOLS: readonly Tool<any>[] = [
  sessionPut,
  sessionGet,
  sessionList,
  sessionArchive,
  sessionUnarchive,
  sessionClose,
  caseRecord,
  caseRetrieve,
  createHandoff,
  acceptHandoff,
  sessionHistory,
  caseList,
  caseShow,
  handoffList,
  journalCheck,
];
