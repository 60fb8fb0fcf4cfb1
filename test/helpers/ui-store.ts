// A store populated as the dashboard tests need it, through the CLI: scoped and unscoped sessions with several
// versions, a closed one, hostile text (markup, `</script>`, control characters), cases and handoffs.
import { expect } from 'vitest';
import { crux } from './cli';

/** The time every command of these tests runs at (freshness and expiry then agree between the CLI and the UI). */
export const UI_NOW = '2026-11-30T12:00:00.000Z';
export const HOSTILE_TASK = '<img src=x onerror=alert(1)>';
export const HOSTILE_STATE = '{"note":"</script><script>alert(2)</script>","rtl":"\u202eevil","c1":"\u0085","step":1}';

async function ok(store: string, args: string[], at = UI_NOW): Promise<string> {
  const r = await crux(store, ['--now', at, ...args]);
  expect(r.stderr).toBe('');
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

export async function populate(store: string): Promise<void> {
  await ok(store, ['--agent', 'planner', 'session', 'put', 'plan-1', '{"step":1,"todo":["a","b"]}'], '2026-11-30T09:00:00.000Z');
  await ok(store, ['--agent', 'planner', 'session', 'put', 'plan-1', '{"step":2,"todo":["b","c"]}', '--add-tokens', '40'], '2026-11-30T10:00:00.000Z');
  await ok(store, ['--agent', 'planner', 'session', 'put', 'plan-2', HOSTILE_STATE], '2026-11-30T11:00:00.000Z');
  await ok(store, ['--agent', 'planner', 'session', 'close', 'plan-2', '--outcome', 'completed', '--summary', 'done: <b>bold</b>']);
  await ok(store, ['--agent', 'builder', 'session', 'put', 'build-1', '{"compiling":true}'], '2026-11-28T12:00:00.000Z');
  await ok(store, ['session', 'put', 'loose', '{"a":1}']);
  await ok(store, ['--agent', 'planner', 'handoff', 'mint', 'plan-1', '--to', 'builder', '--message', 'over to you']);
  await ok(store, ['case', 'record', '--task', HOSTILE_TASK, '--action', 'render it', '--outcome', 'shown as text', '--tag', 'web']);
  await ok(store, ['case', 'record', '--task', 'renew the tls certificate', '--action', 'certbot renew', '--outcome', 'renewed', '--tag', 'tls']);
  await ok(store, [
    'case',
    'record',
    '--task',
    'renew the tls certificate by hand',
    '--action',
    'openssl',
    '--outcome',
    'expired key',
    '--failure',
    '--tag',
    'tls',
  ]);
}
