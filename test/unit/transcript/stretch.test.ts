// The transcript summariser over transcripts shaped as Claude Code writes them (test/fixtures/claude-code/
// transcript-*.jsonl): which lines are prompts, what a stretch's case says, and which stretch is open.
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entriesOf } from '../../../src/domain/transcript/entries';
import { KEPT_PER_TURN, TranscriptFold, promptIn, turnsOf } from '../../../src/domain/transcript/turns';
import { openStretch, stretchCase, stretchCaseId, stretchToRecord, type Ending, type StretchSource } from '../../../src/domain/transcript/stretch';
import type { CaseId } from '../../../src/shared/ids';

const FIXTURES = resolve(__dirname, '../../fixtures/claude-code');
const linesOf = (name: string) =>
  fs
    .readFileSync(join(FIXTURES, `transcript-${name}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const fold = (lines: unknown[]) => {
  const f = new TranscriptFold();
  for (const line of lines) f.add(line);
  return f;
};
const SOURCE: StretchSource = {
  client: 'claude-code',
  sessionKey: '__agent_session::claude-code::s1',
  sessionId: 's1',
  cwd: '/home/dev/shop',
  project: 'shop',
};
const END: Ending = { kind: 'session', reason: 'prompt_input_exit', completed: true };
const caseOf = (lines: unknown[], ending: Ending = END, source: StretchSource = SOURCE) => stretchCase(fold(lines).turns, ending, source, 'Claude Code')!;

describe('transcript entries', () => {
  it('takes the prompts the user typed, and passes over meta lines, commands, their output, compact summaries and subagents', () => {
    const prompts = [...linesOf('two-prompts'), ...linesOf('compacted')].flatMap((l) => entriesOf(l)).filter((e) => e.kind === 'prompt');
    expect(prompts.map((p) => p.kind === 'prompt' && p.text)).toEqual([
      'The factorial tests fail for n = 0: fix factorial and push to https://dev:ghp_s3cr3tT0ken@github.com/acme/shop.git',
      'Also add a test for negative numbers',
      'Make the factorial iterative',
      'Now benchmark the iterative factorial against the recursive one',
    ]);
    expect(entriesOf({ type: 'user', isSidechain: true, message: { role: 'user', content: 'a subagent prompt' } })).toEqual([]);
    expect(entriesOf({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user]' }] } })).toEqual([
      { kind: 'interrupted' },
    ]);
    expect(entriesOf({ type: 'user', message: { role: 'user', content: '<bash-input>ls</bash-input>' } })).toEqual([]);
    expect(
      entriesOf({ type: 'user', message: { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } }] } }),
    ).toEqual([]);
    for (const odd of [null, 7, 'text', [], { type: 'user' }, { type: 'user', message: { content: 5 } }, { type: 'summary', summary: 'x' }])
      expect(entriesOf(odd)).toEqual([]);
    expect(promptIn(linesOf('two-prompts')[4])).toEqual({ text: expect.stringMatching(/^The factorial tests fail/), uuid: linesOf('two-prompts')[4].uuid });
    expect(promptIn(linesOf('two-prompts')[3])).toBeUndefined();
  });

  it('reads tool calls and results, counting a call once however many lines repeat it', () => {
    const lines = linesOf('two-prompts');
    const turns = fold([...lines, ...lines.filter((l) => l.type === 'assistant' || l.toolUseResult !== undefined)]).turns;
    expect(turns).toHaveLength(2);
    expect(Object.fromEntries(turns[0]!.tools)).toEqual({ Read: 1, Bash: 3, Edit: 1 });
    expect(Object.fromEntries(turns[1]!.tools)).toEqual({ Task: 1, MultiEdit: 1, Write: 1, Bash: 1 });
    expect(turns[0]).toMatchObject({ results: 5, errors: 1, lastCommand: { command: expect.stringMatching(/^git commit/), error: false } });
    expect(turns[0]!.files).toEqual(['/home/dev/shop/src/factorial.js']);
    expect(turns[1]!.files).toEqual(['/home/dev/shop/test/factorial.test.js', '/home/dev/shop/CHANGELOG.md']);
  });
});

describe('a stretch as a case', () => {
  it('task: the prompts; action: tools, commands, files changed; outcome: the ending and the last results; tag: the project', () => {
    const c = caseOf(linesOf('two-prompts'));
    expect(c.fields.task).toBe(
      'The factorial tests fail for n = 0: fix factorial and push to https://dev:ghp_s3cr3tT0ken@github.com/acme/shop.git\nAlso add a test for negative numbers',
    );
    expect(c.fields.action).toBe(
      [
        'tools: Bash ×4, Edit ×1, MultiEdit ×1, Read ×1, Task ×1, Write ×1',
        "commands: npm test; git commit -am 'factorial: 0! is 1' && git push https://dev:ghp_s3cr3tT0ken@github.com/acme/shop.git main; npm test -- factorial",
        'files changed: src/factorial.js; test/factorial.test.js; CHANGELOG.md',
      ].join('\n'),
    );
    expect(c.fields.outcome).toBe(
      'Claude Code session ended (reason: prompt_input_exit); 9 tool results, 1 error; last command `npm test -- factorial` succeeded\nlast reply: Added a test: negative numbers throw a RangeError. 13 tests pass.',
    );
    expect(c.fields).toMatchObject({ success: true, tags: ['shop'], context: 'Claude Code session s1 in /home/dev/shop, 2 prompts' });
    expect(c.fields.source_receipt).toMatch(/^claude-code:s1:[0-9a-f-]{36}$/);
    expect(c.caseId).toMatch(/^c_[0-9a-f]{24}$/);
    // Deterministic: the same lines make the same case.
    expect(caseOf(linesOf('two-prompts'))).toEqual(c);
  });

  it('fails when the session was abandoned, the last command failed, or the user interrupted', () => {
    expect(caseOf(linesOf('two-prompts'), { kind: 'session', reason: 'other', completed: false }).fields.success).toBe(false);
    const interrupted = caseOf(linesOf('interrupted'));
    expect(interrupted.fields.success).toBe(false);
    expect(interrupted.fields.outcome).toBe(
      'Claude Code session ended (reason: prompt_input_exit); interrupted by the user; 2 tool results, 2 errors; last command `./deploy.sh staging --retry 5` failed',
    );
    const failing = linesOf('interrupted').slice(0, 3);
    expect(caseOf(failing, { kind: 'turn' }).fields).toMatchObject({
      success: false,
      outcome: 'Claude Code session went on to a new prompt; 1 tool result, 1 error; last command `./deploy.sh staging` failed',
    });
    expect(caseOf(linesOf('compacted'), { kind: 'turn' }).fields.success).toBe(true);
  });

  it('a session without tools or a project says so; nothing before the first prompt is a stretch', () => {
    const lines = linesOf('compacted').filter((l) => l.type === 'user' && typeof l.message.content === 'string');
    const c = caseOf(lines, END, { ...SOURCE, project: null, cwd: null });
    expect(c.fields).toMatchObject({ action: 'answered without tools', tags: [], context: 'Claude Code session s1, 2 prompts' });
    expect(stretchCase(fold(linesOf('two-prompts').slice(0, 4)).turns, END, SOURCE, 'Claude Code')).toBeUndefined();
  });

  it('stays bounded however much the session did', () => {
    const big = [{ type: 'user', uuid: 'u0', message: { role: 'user', content: `fix ${'x'.repeat(5000)}` } }];
    for (let i = 0; i < 3 * KEPT_PER_TURN; i++) {
      big.push({
        type: 'assistant',
        message: {
          content: [
            { type: 'tool_use', id: `t${i}`, name: 'Bash', input: { command: `step ${i} ${'y'.repeat(300)}` } },
            { type: 'tool_use', id: `e${i}`, name: 'Edit', input: { file_path: `/home/dev/shop/f${i}.ts` } },
          ],
        },
      } as never);
    }
    for (let i = 1; i < 40; i++) big.push({ type: 'user', uuid: `u${i}`, message: { role: 'user', content: `and then ${'z'.repeat(900)} ${i}` } });
    const c = caseOf(big);
    expect(c.fields.task.length).toBeLessThanOrEqual(4100);
    expect(c.fields.task).toMatch(/… \(\+\d+ more prompts\)$/);
    expect(c.fields.action.length).toBeLessThan(4500);
    expect(c.fields.action).toContain(`commands: step 0 ${'y'.repeat(192)}…; step 1 `);
    expect(c.fields.action).toMatch(/; … \(\+285 more\)\nfiles changed: f0.ts; .*; … \(\+275 more\)$/);
    // A cut never splits a surrogate pair: the text stays well-formed.
    const emoji = caseOf([{ type: 'user', uuid: 'u', message: { role: 'user', content: '😀'.repeat(700) } }]);
    expect(emoji.fields.task.isWellFormed()).toBe(true);
    expect(caseOf([{ type: 'user', uuid: 'u', message: { role: 'user', content: 'lone \ud800 surrogate' } }]).fields.task.isWellFormed()).toBe(true);
  });
});

describe('the open stretch', () => {
  it('is every turn after the last one whose stretch case the bank has held', () => {
    const turns = fold(linesOf('two-prompts')).turns;
    const ids = turns.map((t) => stretchCaseId(SOURCE, t));
    expect(new Set(ids).size).toBe(2);
    expect(openStretch(turns, SOURCE, () => false)).toEqual(turns);
    expect(openStretch(turns, SOURCE, (id) => id === ids[0])).toEqual(turns.slice(1));
    expect(openStretch(turns, SOURCE, (id) => id === ids[1])).toEqual([]);
    // Another agent's session of the same id is another stretch.
    expect(stretchCaseId({ ...SOURCE, sessionKey: '__agent_session::reviewer::s1' }, turns[1]!)).not.toBe(ids[1]);
    // At a turn's end the last turn stays open: only what a newer prompt closed is recorded.
    expect(stretchToRecord(turns, SOURCE, { kind: 'turn' }, () => false)).toEqual(turns.slice(0, 1));
    expect(stretchToRecord(turns, SOURCE, { kind: 'turn' }, (id) => id === ids[0])).toEqual([]);
    expect(stretchToRecord(turns, SOURCE, END, (id) => id === ids[0])).toEqual(turns.slice(1));
    const held = new Set<CaseId>([ids[0]!]);
    expect(
      stretchCase(
        openStretch(turns, SOURCE, (id) => held.has(id)),
        END,
        SOURCE,
        'Claude Code',
      )!.fields.task,
    ).toBe('Also add a test for negative numbers');
  });

  it("of a resumed session's transcript, only the prompts typed in that session are its own", () => {
    const lines = linesOf('two-prompts');
    const SID = lines[4].sessionId as string;
    // Claude Code gives a resumed session a new id and copies the earlier session's lines first.
    const resumed = lines.map((l, i) => (i >= 18 && 'sessionId' in l ? { ...l, sessionId: 'resumed-id' } : l));
    const turns = fold(resumed).turns;
    expect(turnsOf(turns, 'resumed-id').map((t) => t.prompt)).toEqual(['Also add a test for negative numbers']);
    expect(turnsOf(turns, SID).map((t) => t.prompt)).toEqual([expect.stringMatching(/^The factorial tests fail/)]);
    // No prompt names the session: the transcript is taken whole.
    expect(turnsOf(turns, 'someone-else')).toEqual(turns);
  });
});
