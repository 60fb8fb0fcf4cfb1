// No secret is kept, on any way in (SPEC §7): the CLI's free-text fields, session and case imports, a handoff's
// message, MCP's case_record (and its answer), and a case the Claude Code hook records from a transcript whose
// prompt, commands and tool results hold keys. Afterwards no file of the store holds a secret's value.
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDataDir, tempDir } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { startMcp } from '../helpers/mcp';

const GH = 'ghp_Zq3Xw9Lk2Pm8Rt5Yv1Bn6Cx4Dz7Fa0Gh3Jk9';
const OPENAI = `sk-proj-${'Ab3_dE6-gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2rS5uX8aD1gI4lO7qR0t'.slice(0, 58)}T3BlbkFJ${'Zy8xW5vU2tS9rQ6pO3nM0lK7jI4hG1fE8dC5bA2zY9xW6vU3tS0rQ7pO4nM1lK8j'.slice(0, 58)}`;
const AWS_ID = 'AKIAQ3EGRHNW4YT5XZPL';
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSIsImlhdCI6MTczMzUwMDAwMH0.Qm9vb1N0cmluZ1NpZ25hdHVyZUhlcmUxMjM0NTY3';
const VALUES = [GH, OPENAI, AWS_ID, JWT, 'hunter2-Prod!'];
const TEXT = `OPENAI_API_KEY=${OPENAI} and ${AWS_ID}; GITHUB_TOKEN=${GH} curl -H "Authorization: Bearer ${JWT}" x; DB_PASSWORD=hunter2-Prod! <private>my home address</private>`;

/** Every byte of every file under `dir`, as one string. */
function allBytes(dir: string): string {
  let out = '';
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out += fs.readFileSync(join(e.parentPath, e.name), 'latin1');
  }
  return out;
}
function expectNoSecret(text: string): void {
  for (const v of VALUES) expect(text).not.toContain(v);
  expect(text).not.toContain('my home address');
}

describe('no secret is kept, on every way in', () => {
  it('the CLI: case record, session close --summary, session archive --reason, handoff mint --message', async () => {
    const dir = freshDataDir();
    const rec = await crux(dir, ['--json', 'case', 'record', '--task', TEXT, '--context', TEXT, '--action', TEXT, '--outcome', TEXT]);
    expect(rec.exitCode).toBe(0);
    expectNoSecret(rec.stdout);
    const kept = JSON.parse(rec.stdout).case.task as string;
    expect(kept).toContain('OPENAI_API_KEY=[redacted:openai-key] and [redacted:aws-access-key-id]; GITHUB_TOKEN=[redacted:github-token]');
    expect(kept).toContain('Authorization: Bearer [redacted:jwt]');
    expect(kept).toContain('DB_PASSWORD=[redacted:password] [private]');
    for (const [id, verb] of [
      ['s1', ['close', '--summary', TEXT]],
      ['s2', ['archive', '--reason', TEXT]],
    ] as const) {
      expect((await crux(dir, ['session', 'put', id, '{}'])).exitCode).toBe(0);
      const run = await crux(dir, ['session', verb[0], id, ...verb.slice(1)]);
      expect(run.exitCode, run.stderr).toBe(0);
    }
    expect((await crux(dir, ['--agent', 'planner', 'session', 'put', 's3', '{}'])).exitCode).toBe(0);
    const pkg = join(tempDir(), 'p.crux');
    const mint = await crux(dir, ['--agent', 'planner', 'handoff', 'mint', 's3', '--to', 'builder', '--message', TEXT, '--out', pkg]);
    expect(mint.exitCode, mint.stderr).toBe(0);
    expectNoSecret(allBytes(dir));
    expectNoSecret(fs.readFileSync(pkg, 'latin1'));
  });

  it('imports: case import and the free text of session import', async () => {
    const dir = freshDataDir();
    const cases = join(tempDir(), 'cases.jsonl');
    fs.writeFileSync(cases, `${JSON.stringify({ task: TEXT, action: TEXT, outcome: TEXT, success: true })}\n`);
    const imp = await crux(dir, ['case', 'import', cases]);
    expect(imp.exitCode, imp.stderr).toBe(0);
    expectNoSecret(allBytes(dir));
  });

  it("MCP case_record: neither the store nor the tool's answer holds one", async () => {
    const dir = freshDataDir();
    const mcp = await startMcp(dir);
    try {
      const result = await mcp.call('case_record', { task: TEXT, action: TEXT, outcome: TEXT, success: true });
      expect(result.isError ?? false).toBe(false);
      expectNoSecret(JSON.stringify(result));
      expect(JSON.stringify(result)).toContain('[redacted:github-token]');
    } finally {
      await mcp.close();
    }
    expectNoSecret(allBytes(dir));
  });

  it('the Claude Code hook: a SessionEnd whose transcript holds keys in the prompt, a command and a tool result', async () => {
    const fixtures = resolve(__dirname, '../fixtures/claude-code');
    const source = fs.readFileSync(join(fixtures, 'transcript-two-prompts.jsonl'), 'utf8');
    const withKeys = source
      .split('\n')
      .map((line) => {
        if (line === '') return line;
        const entry = JSON.parse(line);
        const content = entry.message?.content;
        if (entry.type === 'user' && typeof content === 'string' && content.includes('factorial tests fail')) entry.message.content = `${content} ${TEXT}`;
        if (Array.isArray(content)) {
          for (const part of content) {
            if (part.type === 'tool_use' && typeof part.input?.command === 'string') part.input.command += ` && GITHUB_TOKEN=${GH} gh pr create`;
            if (part.type === 'tool_result' && typeof part.content === 'string') part.content += `\nexport OPENAI_API_KEY=${OPENAI}`;
          }
        }
        return JSON.stringify(entry);
      })
      .join('\n');
    expect(withKeys).toContain(GH);
    const transcript = join(tempDir(), 'transcript.jsonl');
    fs.writeFileSync(transcript, withKeys);
    const payload = { ...JSON.parse(fs.readFileSync(join(fixtures, 'session-end-other.json'), 'utf8')), transcript_path: transcript };
    const dir = freshDataDir();
    const run = await crux(dir, ['--now', '2026-12-01T09:00:00.000Z', 'hook', 'claude-code', '--record-cases'], { input: JSON.stringify(payload) });
    expect(run.exitCode, run.stderr).toBe(0);
    expectNoSecret(run.stderr);
    const list = JSON.parse((await crux(dir, ['--json', 'case', 'list'])).stdout).cases;
    expect(list.length).toBe(1);
    expectNoSecret(allBytes(dir));
  });

  it('an error that quotes its input names no secret', async () => {
    const dir = freshDataDir();
    const run = await crux(dir, ['--json', 'session', 'put', 's1', `{"token": "${GH}"`]);
    expect(run.exitCode).toBe(5);
    expectNoSecret(run.stdout + run.stderr);
  });
});
