// Free text as crux keeps it (SPEC §7), over the two corpora of test/fixtures/secrets: every secret of every kind
// removed, the text around it kept byte for byte, and ordinary engineering text never changed.
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hidePrivate, keptText } from '../../../src/shared/free-text';
import { SECRET_KINDS } from '../../../src/shared/secret-rules';
import { scrubText } from '../../../src/shared/scrub';
import { findSecrets, mayHoldSecretlintSecret, secretlintSpans, type SecretSpan } from '../../../src/shared/secrets';

/** This process's CPU time in ms (user + system): a cost, not the wait for a core that wall time adds on a busy host. */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const FIXTURES = join(__dirname, '../../fixtures/secrets');
const rows = <T>(file: string): T[] =>
  fs
    .readFileSync(join(FIXTURES, file), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
const secrets = rows<{ text: string; redacted: string; secrets: { kind: string; value: string }[] }>('secrets.jsonl');
const ordinary = rows<{ text: string }>('ordinary.jsonl');

describe('secrets', () => {
  it('the corpus holds at least 60 secrets, of every kind SPEC §7 names', () => {
    const kinds = new Set(secrets.flatMap((r) => r.secrets.map((s) => s.kind)));
    expect(secrets.flatMap((r) => r.secrets).length).toBeGreaterThanOrEqual(60);
    for (const kind of [
      'aws-access-key-id',
      'aws-secret-access-key',
      'github-token',
      'gitlab-token',
      'slack-token',
      'stripe-key',
      'openai-key',
      'anthropic-key',
      'google-api-key',
      'npm-token',
      'jwt',
      'private-key',
      'bearer',
      'basic-auth',
      'password',
      'generic-secret',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    for (const kind of kinds) expect(SECRET_KINDS).toContain(kind);
  });

  it.each(secrets.map((r, i) => [i, r] as const))('removes each secret of text %i, keeping the rest byte for byte', (_, row) => {
    const kept = keptText(row.text);
    expect(kept).toBe(row.redacted);
    for (const s of row.secrets) expect(kept).not.toContain(s.value);
  });

  it.each(ordinary.map((r, i) => [i, r.text] as const))('keeps ordinary text %i unchanged', (_, text) => {
    expect(findSecrets(text)).toEqual([]);
    expect(keptText(text)).toBe(text);
  });

  it("hands secretlint's rules every text they find something in (the keyword filter drops none)", () => {
    const texts = [...secrets.map((r) => r.text), ...ordinary.map((r) => r.text), ...secrets.flatMap((r) => r.text.split(/\s+/))];
    for (const text of texts.map(scrubText)) {
      const spans: SecretSpan[] = [];
      secretlintSpans(text, spans);
      if (spans.length > 0) expect(mayHoldSecretlintSecret(text.toLowerCase()), text).toBe(true);
    }
  });

  it("finds AWS's documentation key too (secretlint passes over it; crux keeps none)", () => {
    expect(keptText('aws_access_key_id=AKIAIOSFODNN7EXAMPLE')).toBe('aws_access_key_id=[redacted:aws-access-key-id]');
  });

  it('still removes URL credentials, before anything else', () => {
    expect(keptText('git clone https://bot:s3cr3t-Pa55@git.example.com/x.git')).toBe('git clone https://git.example.com/x.git');
  });
});

describe('<private> spans', () => {
  it('are replaced by [private], case-insensitive and across lines', () => {
    expect(hidePrivate('a <private>x\ny</private> b <PRIVATE>z</Private> c')).toBe('a [private] b [private] c');
  });
  it('an unclosed one hides the rest of the text', () => {
    expect(hidePrivate('keep <private>hide\nall of this')).toBe('keep [private]');
  });
  it('text without one is the same string', () => {
    const text = 'a < private > b';
    expect(hidePrivate(text)).toBe(text);
  });
  it('a secret inside a private span is gone with it, and no kind is named', () => {
    expect(keptText('x <private>ghp_0123456789abcdefghijABCDEFGHIJ012345</private> y')).toBe('x [private] y');
  });
});

describe('journal redact: one record', () => {
  const GH = 'ghp_Zq3Xw9Lk2Pm8Rt5Yv1Bn6Cx4Dz7Fa0Gh3Jk9';
  it('redacts free text wherever it stands, and a state only with --states, in place', async () => {
    const { redactRecordData } = await import('../../../src/journal/core/redact-record');
    const state = `{"a": 1,  "note": "token ${GH} here", "n": [ "x" ]}`;
    const data = { id: 's1', state, summary: `pushed with ${GH}`, nested: { cases: [{ task: `t ${GH}`, case_id: 'c1' }] } };
    const free = redactRecordData(data, { states: false });
    expect(free.kinds).toEqual(['github-token', 'github-token']);
    expect(free.data).toEqual({
      ...data,
      summary: 'pushed with [redacted:github-token]',
      nested: { cases: [{ task: 't [redacted:github-token]', case_id: 'c1' }] },
    });
    const all = redactRecordData(data, { states: true });
    expect((all.data as { state: string }).state).toBe('{"a": 1,  "note": "token [redacted:github-token] here", "n": [ "x" ]}');
    expect(JSON.parse((all.data as { state: string }).state)).toEqual({ a: 1, note: 'token [redacted:github-token] here', n: ['x'] });
  });
  it('hands back the very object when nothing is found', async () => {
    const { redactRecordData } = await import('../../../src/journal/core/redact-record');
    const data = { id: 's1', state: '{"x":"y"}', summary: 'fine' };
    expect(redactRecordData(data, { states: true }).data).toBe(data);
  });
});

describe('detection cost', () => {
  it('is linear in the text: 16× the text costs far less than 256× (no pattern rescans a long run)', () => {
    const patterns: ((k: number) => string)[] = [
      (k) => `${'a'.repeat(k)}key`,
      (k) => `${'a_'.repeat(k)} token`,
      (k) => `password${'='.repeat(k)}`,
      (k) => `bearer ${'a'.repeat(k)}`,
      (k) => `ey${'a'.repeat(k)}.ey`,
      (k) => `--token${' '.repeat(k)}`,
      (k) => `<private>${'x'.repeat(k)}`,
      (k) => `ghp_${'A'.repeat(k)}`,
    ];
    const best = (text: string) =>
      Math.min(
        ...Array.from({ length: 5 }, () => {
          const start = cpuMs();
          keptText(text);
          return cpuMs() - start;
        }),
      );
    for (const make of patterns) {
      // Linear is 16×, a rescan of the run 256×; the floor keeps a small run's noise out.
      const small = best(make(20_000));
      const large = best(make(320_000));
      expect(large, make(4)).toBeLessThan(Math.max(small, 2) * 64);
    }
  });
});
