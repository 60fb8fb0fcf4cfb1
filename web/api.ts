// Reading the JSON twin: same origin, the cookie sent by the browser; an error document becomes an Error.
export interface ErrorDocument {
  error: { code: number; kind?: string; message: string; hint?: string };
}

/** How far the server's clock (--now or CRUX_NOW when set) is from the browser's: relative times use the server's. */
let clockOffset = 0;
export function readClock(res: Response): void {
  const at = Date.parse(res.headers.get('X-Crux-Now') ?? '');
  if (!Number.isNaN(at)) clockOffset = at - Date.now();
}
export const serverNow = (): number => Date.now() + clockOffset;

export async function get<T>(path: string, params: Record<string, string | number | boolean | undefined> = {}): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '' && v !== false) q.set(k, String(v));
  const url = `/api/${path}${q.size > 0 ? `?${q}` : ''}`;
  const res = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  readClock(res);
  const body = (await res.json()) as T | ErrorDocument;
  if (!res.ok) {
    const e = (body as ErrorDocument).error;
    throw new Error(e?.hint ? `${e.message} (${e.hint})` : (e?.message ?? `HTTP ${res.status}`));
  }
  return body as T;
}

/** The S of SPEC §8, as the pages use it. */
export interface Session {
  session_id: string;
  agent: string | null;
  status: string;
  updated_at: string | null;
  expires_at: string | null;
  total_tokens: number;
  archived: boolean;
  archive_reason: string | null;
  actor: string | null;
  freshness: string | null;
  created_at?: string | null;
  closed_at?: string | null;
  outcome?: string | null;
  summary?: string | null;
  state?: unknown;
  state_bytes?: number;
}

export interface Case {
  case_id: string;
  task: string;
  context: string | null;
  action: string;
  outcome: string;
  success: boolean;
  reward: number | null;
  source_receipt?: string | null;
  tags: string[];
  created_at: string;
  times_reused: number;
}
