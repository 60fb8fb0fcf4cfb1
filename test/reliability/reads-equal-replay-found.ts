// The histories reads-equal-replay.property.test.ts found once (or that each fix was proved by), in fast-check's
// example form — [steps, cache/ at the reads, damage, reads, reader, hours] — run first every time.
/**
 * Histories the property found once, run first every time: two compacted lines of one length swapped under an
 * index that still verifies its head (a line the index names then holds another key: StoreIndex.foldHash); a bit
 * flipped in a line of a restored cache/'s prefix (an index behind its journal, no writer writing: DataDir's
 * trustedRead); a chain break `session history` kept; refusals that passed over damage.
 */
export const FOUND: unknown[] = [
  [
    [
      { op: 'put', agent: 1, id: 0, skew: -100 },
      { op: 'record', words: [0], success: false },
      { op: 'put', agent: 2, id: 3, skew: 0 },
      { op: 'put', agent: 2, id: 3, skew: -100 },
      { op: 'compact' },
      { op: 'put', agent: 0, id: 0, skew: 0 },
      { op: 'handoff', agent: 1, id: 0 },
      { op: 'put', agent: 0, id: 0, skew: 0 },
    ],
    { op: 'restore', how: 'damaged', at: 465790560 },
    { how: 'swap', file: 0, at: 26 },
    [
      'session list {"all":true,"archived":false,"stranded":false,"allAgents":true,"count":false}',
      'session list {"all":true,"archived":false,"stranded":false,"allAgents":true,"limit":3,"count":true}',
      'session list {"all":false,"archived":true,"stranded":false,"allAgents":true,"limit":1,"count":false}',
      'session list {"all":false,"archived":true,"stranded":false,"allAgents":true,"limit":3,"count":false}',
      'session list {"all":false,"archived":false,"stranded":true,"allAgents":false,"count":true}',
      'session list {"all":false,"archived":false,"stranded":true,"allAgents":true,"limit":1,"count":false}',
    ],
    1,
    23,
  ],
  [
    [
      { op: 'put', agent: 1, id: 0, skew: 0 },
      { op: 'put', agent: 0, id: 0, skew: 0 },
      { op: 'save' },
      { op: 'restore', how: 'saved', at: 0 },
      { op: 'put', agent: 0, id: 0, skew: 0 },
      { op: 'handoff', agent: 1, id: 0 },
    ],
    { op: 'restore', how: 'saved', at: 0 },
    { how: 'flip', file: 0, at: 0 },
    ['session list {"all":false,"archived":false,"stranded":true,"allAgents":false,"limit":3,"count":true}'],
    0,
    24,
  ],
  // A line deleted: the next one breaks the chain, a record history keeps (it told only lines it skipped).
  [
    [
      { op: 'put', agent: 0, id: 0, skew: 0 },
      { op: 'put', agent: 0, id: 0, skew: 0 },
      { op: 'put', agent: 0, id: 0, skew: 0 },
    ],
    null,
    { how: 'delete', file: 0, at: 1 },
    ['session history s0', 'mcp session_history {"session_id":"s0"}', 'ui /api/sessions/-/s0/history'],
    0,
    0,
  ],
  // Refusals that passed over a damaged line: their error documents carry it in `warnings`, as answers do.
  [
    [
      { op: 'put', agent: 0, id: 0, skew: 0 },
      { op: 'put', agent: 0, id: 1, skew: 0 },
      { op: 'put', agent: 0, id: 0, skew: 0 },
    ],
    { op: 'restore', how: 'absent', at: 0 },
    { how: 'flip', file: 0, at: 1 },
    ['session get s3', 'session history s4', 'mcp session_get {"session_id":"s4"}', 'ui /api/sessions/b/s3', 'ui /api/sessions/b/s3/history'],
    0,
    0,
  ],
  // A compacted journal's first line deleted: check tells it twice (the journal, and its history's report: it does
  // not continue the history before it); a history read reads both and tells both.
  [
    [{ op: 'put', agent: 1, id: 1, skew: 0 }, { op: 'put', agent: 1, id: 1, skew: 0 }, { op: 'unrecord', pick: 0 }, { op: 'compact' }],
    null,
    { how: 'delete', file: 0, at: 0 },
    [
      'session list {"all":true,"archived":false,"stranded":false,"allAgents":true,"count":false}',
      'mcp session_history {"session_id":"s2","limit":1}',
      'session history s2',
      'mcp journal_check {}',
    ],
    0,
    0,
  ],
];
