// `crux ui`'s HTTP server (SPEC §12): Node's http on loopback, every request judged by guard.ts, the page and its
// assets from dist/ui/, the JSON twin from api.ts (one request reads the store at a time, as it is now), and
// Server-Sent Events from live.ts. It keeps no store content between requests: memory stays flat.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { contextOf, type GlobalOptions } from '../context';
import { resolveStore } from '../store';
import { writeStdout } from '../../output/stdout';
import { CruxError, invalid } from '../../shared/errors';
import { ALL_STORES } from '../../domain/stores';
import { answer } from './api';
import type { ApiScope } from './api-scope';
import { cookieHeader, judge, SECURITY_HEADERS, type Binding } from './guard';
import { fanOut, watchDataDir, type Live } from './live';
import { openPgReader, type PgReader } from '../../journal/pg/pg-reader';

export interface UiOptions {
  readonly port: number;
  readonly bind: string;
  readonly open: boolean;
  /** Where index.html, app.js and app.css are (default: dist/ui beside the bundle). */
  readonly assets?: string;
}

export interface RunningUi {
  readonly url: string;
  readonly binding: Binding;
  close(): Promise<void>;
}

const ASSETS: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};
const PAGE = 'index.html';
/** Open event streams at most (a tab each): beyond, a new one is refused with 503 and the browser retries. */
const MAX_STREAMS = 64;
const HEARTBEAT_MS = 15_000;

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type, 'Content-Length': String(bytes.length), ...extra });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

const sendError = (req: IncomingMessage, res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}) =>
  send(req, res, status, 'application/json', JSON.stringify({ error: { code: status, message } }), extra);

/** The address as a URL spells it. */
const urlHost = (address: string) => (address.includes(':') ? `[${address}]` : address);

function listen(server: Server, port: number, bind: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new CruxError('io_error', `port ${port} on ${bind} is in use`, 'pick another with --port, or 0 for a free one'));
      else if (error.code === 'EACCES') reject(invalid(`port ${port} on ${bind} needs privileges`, 'use a port above 1023, or 0 for a free one'));
      else reject(invalid(`cannot listen on ${bind}:${port} (${error.code})`, 'give an address of this host with --bind, e.g. 127.0.0.1'));
    });
    server.listen(port, bind, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Starts the dashboard and answers once it listens (the tests call this in-process). */
export async function startUi(globals: GlobalOptions, ui: UiOptions, env: NodeJS.ProcessEnv = process.env): Promise<RunningUi> {
  // Refused before anything listens: a bad store, agent or --now.
  const target = resolveStore(globals, env);
  const probe = contextOf(globals, env);
  const assets = ui.assets ?? join(__dirname, 'ui');
  readFileSync(join(assets, PAGE));
  const pg: PgReader | undefined =
    target.kind === 'postgres' ? openPgReader(target.url, target.source === 'env' ? 'CRUX_STORE' : '--store', probe.warn) : undefined;
  const scope: ApiScope = { globals, env, pg };
  const fixedNow = globals.now !== undefined || env.CRUX_NOW ? probe.nowIso : undefined;
  const files = ALL_STORES.map((s) => s.file);
  let live: Live;
  if (pg !== undefined) {
    const out = fanOut();
    await pg.listen(out.tell, files);
    live = out;
  } else live = watchDataDir(probe.dataDir.location, files);

  let queue: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn);
    queue = run.catch(() => {});
    return run;
  };
  const streams = new Set<ServerResponse>();
  const binding: { host: string; port: number; token: string } = { host: urlHost(ui.bind), port: 0, token: randomBytes(24).toString('base64url') };

  const stream = (req: IncomingMessage, res: ServerResponse) => {
    if (streams.size >= MAX_STREAMS) return sendError(req, res, 503, 'too many open dashboards');
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    if (req.method === 'HEAD') return res.end();
    res.write('retry: 1000\n\nevent: ready\ndata: {}\n\n');
    streams.add(res);
    const unsubscribe = live.subscribe((journal) => res.write(`event: changed\ndata: ${JSON.stringify({ journal })}\n\n`));
    const heartbeat = setInterval(() => res.write(': alive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    res.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(res);
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://ui.invalid');
    const verdict = judge(binding, { method: req.method, host: req.headers.host, cookie: req.headers.cookie, token: url.searchParams.get('token') });
    if (!verdict.ok) return sendError(req, res, verdict.status, verdict.message, verdict.status === 405 ? { Allow: 'GET, HEAD' } : {});
    const cookie: Record<string, string> = verdict.setCookie ? { 'Set-Cookie': cookieHeader(binding) } : {};
    const path = url.pathname;
    if (path.startsWith('/api/')) {
      url.searchParams.delete('token');
      if (path === '/api/events') {
        if (verdict.setCookie) res.setHeader('Set-Cookie', cookieHeader(binding));
        return stream(req, res);
      }
      let parts: string[];
      try {
        parts = path.slice('/api/'.length).split('/').map(decodeURIComponent);
      } catch {
        return sendError(req, res, 400, 'a path segment is not valid percent-encoding');
      }
      const result = await serially(() => answer(scope, parts, url.searchParams));
      // The time the answer was judged at (--now or CRUX_NOW when set): the page says "5 min ago" from it.
      return send(req, res, result.status, 'application/json', `${result.body}\n`, { ...cookie, 'X-Crux-Now': fixedNow ?? new Date().toISOString() });
    }
    // The token leaves the address bar (and the history) at once: the cookie carries it from now on.
    if (verdict.setCookie) {
      url.searchParams.delete('token');
      return send(req, res, 303, 'text/plain; charset=utf-8', 'see the dashboard\n', { ...cookie, Location: `${path}${url.search}${url.hash}` });
    }
    if (path === '/' || path === '/index.html') return send(req, res, 200, 'text/html; charset=utf-8', readFileSync(join(assets, PAGE)));
    const name = path.startsWith('/assets/') ? path.slice('/assets/'.length) : '';
    if (Object.hasOwn(ASSETS, name)) return send(req, res, 200, ASSETS[name]!, readFileSync(join(assets, name)));
    return sendError(req, res, 404, `no such page: ${path}`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(req, res, 500, `internal error: ${String(error)}`);
      else res.destroy();
    });
  });
  binding.port = await listen(server, ui.port, ui.bind);
  return {
    url: `http://${binding.host}:${binding.port}/?token=${binding.token}`,
    binding,
    async close() {
      for (const res of streams) res.end();
      live.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pg?.close();
    },
  };
}

/** Opens `url` in the desktop's browser, if there is one; a failure to do so is not crux's. */
function openBrowser(url: string): void {
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => {});
  child.unref();
}

/** `crux ui`: prints the URL line and serves until SIGINT or SIGTERM, then closes everything (exit 0). */
export async function serveUi(globals: GlobalOptions, ui: UiOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const running = await startUi(globals, ui, env);
  // Listening for the signals before the line is out: whoever reads the line may interrupt at once.
  const interrupted = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  writeStdout(`crux ui: ${running.url}\n`);
  if (ui.open) openBrowser(running.url);
  await interrupted;
  await running.close();
}
