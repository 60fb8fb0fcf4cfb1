// What `journal redact` does to a quarantined item (core/redact-record.ts, redactQuarantined): every kind of item
// repair, appends and rewrites leave there loses its secrets, and the bytes around them are kept.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactQuarantined } from '../../../src/journal/core/redact-record';

const GH = 'ghp_Zq3Xw9Lk2Pm8Rt5Yv1Bn6Cx4Dz7Fa0Gh3Jk9';
/** A PEM block of the corpus (test/fixtures/secrets). */
const PEM = readFileSync(join(__dirname, '../../fixtures/secrets/secrets.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .flatMap((l) => (JSON.parse(l) as { secrets: { kind: string; value: string }[] }).secrets)
  .find((s) => s.kind === 'private-key')!.value;

describe('redactQuarantined', () => {
  it('leaves an item without a secret alone (undefined), whatever its bytes', () => {
    expect(redactQuarantined(Buffer.from('{"v":1,"seq":3,"data":{"task":"reset the password"}}\n\u0000\u00ff garbage'))).toBeUndefined();
  });

  it('redacts every string of a JSON line, keeps the other lines byte for byte', () => {
    const other = '{"v":1,"seq":1,"data":{"task":"caf\u00e9 ok"}}';
    const item = Buffer.from(`${other}\n{"v":1,"seq":2,"data":{"deep":{"x":["GITHUB_TOKEN=${GH}"]}}}\n`);
    const out = redactQuarantined(item)!;
    expect(out.kinds).toEqual(['github-token']);
    const text = out.bytes.toString('utf8');
    expect(text).not.toContain(GH);
    expect(text.split('\n')[0]).toBe(other);
    expect(JSON.parse(text.split('\n')[1]!).data.deep.x[0]).toBe('GITHUB_TOKEN=[redacted:github-token]');
  });

  it("decodes a removed line's bytes_b64 (removed-lines.jsonl), redacts it, encodes it again", () => {
    const removed = `{"v":1,"seq":7,"data":{"summary":"token ${GH}"},"h":"broken"}`;
    const item = Buffer.from(`${JSON.stringify({ line: 7, offset: 700, reason: 'hash mismatch', bytes_b64: Buffer.from(removed).toString('base64') })}\n`);
    const out = redactQuarantined(item)!;
    const doc = JSON.parse(out.bytes.toString('utf8').trim());
    expect(doc).toMatchObject({ line: 7, offset: 700, reason: 'hash mismatch' });
    expect(Buffer.from(doc.bytes_b64, 'base64').toString('utf8')).toBe('{"v":1,"seq":7,"data":{"summary":"token [redacted:github-token]"},"h":"broken"}');
  });

  it('redacts a torn tail as text, and replaces whole a line cut short whose escaped form hides a PEM block', () => {
    const tail = redactQuarantined(Buffer.from(`{"v":1,"seq":9,"data":{"summary":"GITHUB_TOKEN=${GH} and more`))!;
    expect(tail.bytes.toString('utf8')).toBe('{"v":1,"seq":9,"data":{"summary":"GITHUB_TOKEN=[redacted:github-token] and more');
    const pem = redactQuarantined(Buffer.from(`{"v":1,"seq":9,"data":{"context":${JSON.stringify(PEM)}`))!;
    expect(pem.bytes.toString('utf8')).not.toContain(PEM.split('\n')[1]!.slice(0, 24));
    expect(pem.kinds).toContain('private-key');
  });
});

describe('redactRecordData: a state whose value is a secret by the name it is assigned to', () => {
  it('redacts the value whole, keeps the rest of the state byte for byte, still JSON, as journal check finds it', async () => {
    const { redactRecordData } = await import('../../../src/journal/core/redact-record');
    const { findSecrets } = await import('../../../src/shared/secrets');
    const state = '{"user": "ada", "password":"hunter2-Prod!x", "n": 1}';
    expect(findSecrets(state).map((s) => s.kind)).toEqual(['password']);
    const { data, kinds } = redactRecordData({ id: 's1', state }, { states: true });
    expect(kinds).toEqual(['password']);
    const after = (data as { state: string }).state;
    expect(after).toBe('{"user": "ada", "password":"[redacted:password]", "n": 1}');
    expect(findSecrets(after)).toEqual([]);
    expect(redactRecordData({ id: 's1', state }, { states: false }).kinds).toEqual([]);
  });
});
