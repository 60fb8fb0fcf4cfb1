// `crux ui` in tests: the built bin started on a store (its URL line read), and raw HTTP requests to it with any
// Host header, method and cookie (fetch cannot set Host).
import { execa, type ResultPromise } from 'execa';
import { request } from 'node:http';
import { CRUX, storeArgs, testEnv } from './cli';

export const URL_LINE = /^crux ui: http:\/\/(127\.0\.0\.1|\[::1\]|[^:/]+):(\d+)\/\?token=([A-Za-z0-9_-]+)\n$/;

export interface RunningUi {
  readonly proc: ResultPromise<{ reject: false }>;
  readonly line: string;
  readonly port: number;
  readonly token: string;
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly cookie: string;
}

/** Starts `crux ui` on `store` and resolves once it printed its URL line. */
export async function startUi(store: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<RunningUi> {
  const proc = execa(CRUX, [...storeArgs(store), 'ui', ...args], { reject: false, env: testEnv(env), extendEnv: false, stripFinalNewline: false });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out);
    });
    proc.then((r) => reject(new Error(`crux ui exited ${r.exitCode}: ${String(r.stderr)}`)));
  });
  const m = URL_LINE.exec(line);
  if (m === null) throw new Error(`not the URL line: ${JSON.stringify(line)}`);
  const port = Number(m[2]);
  return { proc, line, port, token: m[3]!, base: `http://127.0.0.1:${port}`, cookie: `crux_ui_${port}=${m[3]}` };
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request: `host` defaults to the bound address and port; `cookie` and `method` as given. */
export function raw(ui: RunningUi, path: string, opts: { host?: string; cookie?: string; method?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Host: opts.host ?? `127.0.0.1:${ui.port}` };
    if (opts.cookie !== undefined) headers.Cookie = opts.cookie;
    const req = request({ host: '127.0.0.1', port: ui.port, path, method: opts.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET with the cookie, as the browser sends it: the parsed JSON document. */
export async function api(ui: RunningUi, path: string): Promise<{ status: number; doc: any }> {
  const r = await raw(ui, path, { cookie: ui.cookie });
  return { status: r.status, doc: JSON.parse(r.body) };
}

/** Opens /api/events and resolves with the first `changed` event's data for which `want` holds. */
export function nextChange(
  ui: RunningUi,
  want: (data: { journal: string }) => boolean,
): { ready: Promise<void>; changed: Promise<{ journal: string }>; close(): void } {
  let close = () => {};
  let onReady = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const changed = new Promise<{ journal: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ui.port, path: '/api/events', headers: { Host: `127.0.0.1:${ui.port}`, Cookie: ui.cookie } }, (res) => {
      let buffer = '';
      res.on('data', (c: Buffer) => {
        buffer += c.toString();
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (/^event: ready$/m.test(event)) onReady();
          const data = /^event: changed\ndata: (.*)$/m.exec(event)?.[1];
          if (data !== undefined && want(JSON.parse(data))) {
            resolve(JSON.parse(data));
            req.destroy();
          }
          end = buffer.indexOf('\n\n');
        }
      });
    });
    req.on('error', (e) => reject(e));
    req.end();
    close = () => req.destroy();
  });
  changed.catch(() => {});
  return { ready, changed, close: () => close() };
}
