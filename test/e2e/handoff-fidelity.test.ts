// What `session put` accepts, `handoff mint` packages and `handoff accept` stores byte for byte; a state the
// Crux daemon could not read is said so (stderr at mint, daemon_compatible in inspect), never refused.
import { describe, expect, it } from 'vitest';
import { freshDataDir, type Run } from '../helpers/cli';
import { crux } from '../helpers/run-cli';
import { b3hash, b3keyed, b3raw } from '../unit/handoff/reference-blake3';

const env = { CRUX_NOW: '2026-11-29T21:00:00Z' };

async function ok(run: Promise<Run>): Promise<Run> {
  const r = await run;
  expect(r.exitCode, `stderr: ${r.stderr}`).toBe(0);
  return r;
}

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('handoff fidelity: put → mint → accept → get', () => {
  it.each([
    ['duplicate keys', '{"a":1,"a":2,"b":{"c":true,"c":false}}', undefined],
    ['depth 600', deep(600), /nesting deeper than 127 levels/],
    ['1e400', '{"n":1e400,"m":-1e400,"big":12345678901234567890,"one":1.0}', /number 1e400 is out of the range of an f64/],
    ['a lone surrogate escape', '{"s":"\\ud800x"}', /lone surrogate escape \\ud800/],
    ['depth 126, as deep as serde_json reads inside a package', deep(126), undefined],
  ])('%s', async (_name, state, warning) => {
    const dir = freshDataDir();
    await ok(crux(dir, ['--agent', 'alice', 'session', 'put', 's', state], { env }));
    const mint = await ok(crux(dir, ['--agent', 'alice', 'handoff', 'mint', 's', '--to', 'bob'], { env }));
    const envelope = JSON.parse(mint.stdout);
    const payload = Buffer.from(envelope.payload_b64, 'base64').toString('utf8');
    expect(payload).toContain(`"session_state":${state},"facts"`);
    if (warning === undefined) expect(mint.stderr).toBe('');
    else {
      expect(mint.stderr).toMatch(/^crux: a Crux daemon could not read this package: [^\n]*; crux accepts it\n$/);
      expect(mint.stderr).toMatch(warning);
    }

    const inspect = await crux(dir, ['--json', 'handoff', 'inspect', '-', '--as', 'bob'], { env, input: mint.stdout });
    expect(inspect.exitCode, inspect.stderr).toBe(0);
    const report = JSON.parse(inspect.stdout);
    expect(report.checks.daemon_compatible).toBe(warning === undefined ? 'ok' : 'failed');
    if (warning !== undefined) expect(report.details.daemon_compatible).toMatch(warning);
    const human = await crux(dir, ['handoff', 'inspect', '-', '--as', 'bob'], { env, input: mint.stdout });
    expect(human.stdout).toMatch(warning === undefined ? /ok +daemon_compatible/ : /FAILED +daemon_compatible/);

    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], { env, input: mint.stdout }));
    const got = await ok(crux(dir, ['--agent', 'bob', 'session', 'get', 's'], { env }));
    expect(got.stdout).toBe(state);
  });

  it('refuses a package whose payload repeats a package field (serde refuses a repeated struct field): 5', async () => {
    const dir = freshDataDir();
    const secret = 'shared secret';
    const payload = Buffer.from(
      '{"session_id":"s","session_id":"t","session_state":{"a":1,"a":2},"facts":[],"created_at":"2026-11-29T20:00:00Z","source_agent":"alice","target_agent":null,"message":null,"work_ids":[]}',
    );
    const envelope = JSON.stringify({
      payload_b64: payload.toString('base64'),
      content_hash: b3hash(new Uint8Array(payload)),
      signature_b64: Buffer.from(b3keyed(b3raw(new Uint8Array(Buffer.from(secret))), new Uint8Array(payload)), 'hex').toString('base64'),
      signature_alg: 'blake3-mac-v1',
    });
    const run = { env: { ...env, CRUX_MCP_HANDOFF_SECRET: secret }, input: envelope };
    const accept = await crux(dir, ['handoff', 'accept', '-', '--as', 'bob'], run);
    expect(accept.exitCode).toBe(5);
    expect(accept.stderr).toMatch(/has the field "session_id" twice/);
    const inspect = await crux(dir, ['--json', 'handoff', 'inspect', '-'], run);
    expect(inspect.exitCode).toBe(5);
    expect(JSON.parse(inspect.stdout).checks).toMatchObject({ signature: 'ok', payload: 'failed', daemon_compatible: 'skipped' });
    // The same state with the field once is accepted, its repeated keys kept.
    const once = Buffer.from(payload.toString().replace('"session_id":"t",', ''));
    const fixed = JSON.stringify({
      payload_b64: once.toString('base64'),
      content_hash: b3hash(new Uint8Array(once)),
      signature_b64: Buffer.from(b3keyed(b3raw(new Uint8Array(Buffer.from(secret))), new Uint8Array(once)), 'hex').toString('base64'),
      signature_alg: 'blake3-mac-v1',
    });
    await ok(crux(dir, ['handoff', 'accept', '-', '--as', 'bob', '--max-age', '2h'], { ...run, input: fixed }));
    expect((await ok(crux(dir, ['--agent', 'bob', 'session', 'get', 's'], { env }))).stdout).toBe('{"a":1,"a":2}');
  });
});
