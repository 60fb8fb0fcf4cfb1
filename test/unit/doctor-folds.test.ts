// doctor's folds (domain/doctor-folds.ts) keep little of each record, through a scan's keep, and must report what the
// stores' own folds give: the sessions judged the same (counts, stranded and overdue lists in the same order) and the
// same compaction estimates, over random histories of every session and case event.
import { describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src/journal/codec/record';
import type { LinePosition } from '../../src/journal/codec/line';
import { CASE_STORE } from '../../src/domain/case/store';
import { SESSION_STORE } from '../../src/domain/session/fold';
import { doctorSpec } from '../../src/domain/doctor-folds';
import { judgeSessions } from '../../src/domain/doctor-sessions';
import type { DoctorInput, Finding } from '../../src/domain/doctor-report';
import type { AgentName } from '../../src/shared/ids';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const IDS = ['a', 'b', 'c', 'd', '__agent_session::x::e', '__agent_session::y::f', '__agent_session::x::g'];
const STATUSES = ['active', 'closed', 'archived', 'handed_off', 'nonsense'];

function sessionHistory(rand: () => number, n: number): { ev: string; data: Record<string, unknown>; ts: string }[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const time = () => iso(NOW - Math.floor(rand() * 10 * 24 * 3_600_000));
  const expiry = () => (rand() < 0.5 ? null : iso(NOW + Math.floor((rand() - 0.6) * 4 * 3_600_000)));
  const out = [];
  for (let i = 0; i < n; i++) {
    const id = pick(IDS);
    const kind = pick(['put', 'put', 'put', 'imported', 'closed', 'archived', 'unarchived', 'handed_off', 'received', 'touched', 'deleted']);
    const data: Record<string, unknown> =
      kind === 'put'
        ? { id, state: `{"n":${i}}`, total_tokens: i, expires_at: expiry(), ...(rand() < 0.3 ? { created_at: time() } : {}) }
        : kind === 'imported'
          ? { id, state: '{}', status: pick(STATUSES), updated_at: rand() < 0.1 ? 'garbage' : time(), expires_at: expiry(), created_at: time() }
          : kind === 'received'
            ? { id, state: '{}', total_tokens: 1, expires_at: expiry(), handoff_id: 'h1' }
            : kind === 'closed'
              ? { id, outcome: pick(['completed', 'failed', 'expired']), summary: 'done' }
              : kind === 'archived'
                ? { id, reason: 'parked' }
                : kind === 'handed_off'
                  ? { id, handoff_id: 'h1' }
                  : { id };
    out.push({ ev: `session.${kind}`, data, ts: time() });
  }
  return out;
}

function caseHistory(rand: () => number, n: number): { ev: string; data: Record<string, unknown>; ts: string }[] {
  const out = [];
  for (let i = 0; i < n; i++) {
    const id = `c${Math.floor(rand() * 12)}`;
    const r = rand();
    const body = {
      case_id: id,
      task: `task ${i}`,
      action: 'a',
      outcome: 'o',
      reward: r < 0.1 ? 7 : 0.5,
      created_at: iso(NOW),
      success: rand() < 0.8,
      tags: ['t'],
    };
    const ev = r < 0.15 ? 'case.deleted' : r < 0.25 ? 'case.reused' : rand() < 0.5 ? 'case.recorded' : 'case.imported';
    const data = ev === 'case.deleted' ? { case_id: id } : ev === 'case.reused' ? { case_id: id, times_reused: 3 } : body;
    out.push({ ev, data, ts: iso(NOW) });
  }
  return out;
}

/** Each draft as the record a replay hands evolve, at its own line, with a line length of its own. */
function records(drafts: { ev: string; data: Record<string, unknown>; ts: string }[]): [JournalRecord, LinePosition][] {
  let offset = 0;
  return drafts.map((d, i) => {
    const length = JSON.stringify(d.data).length + 90;
    const at = { line: i + 1, offset, length };
    offset += length + 1;
    return [{ seq: i + 1, ts: d.ts, ev: d.ev, data: JSON.parse(JSON.stringify(d.data)), p: '', h: '' }, at];
  });
}

describe("doctor's folds report what the stores' folds give", () => {
  const input = { now: NOW, agent: 'x' as AgentName } as DoctorInput;
  const judge = (state: Parameters<typeof judgeSessions>[0]) => {
    const findings: Finding[] = [];
    return { report: judgeSessions(state, input, findings), findings };
  };

  it('sessions: the same judgement and estimate over random histories', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const history = records(sessionHistory(random(seed), 5 + (seed % 60)));
      const full = SESSION_STORE.initial();
      for (const [record, at] of history) SESSION_STORE.evolve(full, record, at);
      const spec = doctorSpec(SESSION_STORE, judge);
      const kept = spec.kept!;
      const briefs = spec.initial();
      // What a scan holds of a batch is made first, then folded in order (the batch whole).
      const items = history.map(([record, at]) => [kept.keep(record, at), at] as const);
      for (const [item, at] of items) kept.evolve(briefs, item, at);
      expect(spec.liveBytes!(briefs), `seed ${seed}`).toBe(SESSION_STORE.liveBytes!(full));
      expect(kept.finish!(briefs), `seed ${seed}`).toEqual(judge(full));
    }
  });

  it('cases: the bank estimate of live bytes over random histories', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const history = records(caseHistory(random(seed), 3 + (seed % 40)));
      const bank = CASE_STORE.initial();
      for (const [record, at] of history) CASE_STORE.evolve(bank, record, at);
      const spec = doctorSpec(CASE_STORE, judge);
      const lengths = spec.initial();
      for (const [record, at] of history) spec.kept!.evolve(lengths, spec.kept!.keep(record, at), at);
      expect(spec.liveBytes!(lengths), `seed ${seed}`).toBe(CASE_STORE.liveBytes!(bank));
      // Once the estimate is taken, nothing of the cases is kept.
      expect(spec.kept!.finish!(lengths)).toBeNull();
    }
  });
});
