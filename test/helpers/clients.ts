// The real agent clients from the npm registry, pinned, installed once into a cache directory shared by every
// run (CRUX_CLIENTS_DIR, else <tmpdir>/crux-clients), and run with HOME in a fresh temp directory: no account,
// no network. A client that cannot be installed or run here is skipped with its reason, unless
// CRUX_REQUIRE_CLIENTS=1 (CI), where that is a failure.
import { execa } from 'execa';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testEnv } from './cli';

export const CLIENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.328' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0' },
  codex: { pkg: '@openai/codex', version: '0.169.0' },
} as const;

export type ClientName = keyof typeof CLIENTS;

export const clientsRequired = process.env.CRUX_REQUIRE_CLIENTS === '1';

const cacheDir = () => process.env.CRUX_CLIENTS_DIR || join(tmpdir(), 'crux-clients');

/** The client's executable, installed into the cache if it is not there yet; or why it cannot be had. */
export async function ensureClient(name: ClientName): Promise<{ bin: string } | { skipped: string }> {
  const { pkg, version } = CLIENTS[name];
  const prefix = join(cacheDir(), `${pkg.replace('/', '+')}@${version}`);
  const bin = join(prefix, 'node_modules', '.bin', name);
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(cacheDir(), { recursive: true });
    // Installed aside and renamed into place: a run stopped half-way never leaves a half-installed client.
    const staging = fs.mkdtempSync(join(cacheDir(), '.install-'));
    const install = await execa('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', staging, `${pkg}@${version}`], {
      reject: false,
      env: testEnv(),
      all: true,
    });
    if (install.exitCode !== 0) {
      fs.rmSync(staging, { recursive: true, force: true });
      return { skipped: `${pkg}@${version} could not be installed from the npm registry: ${String(install.all).trim().split('\n').slice(-1)[0]}` };
    }
    try {
      fs.renameSync(staging, prefix);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }); // another run put it there first
    }
  }
  const version_ = await execa(bin, ['--version'], {
    reject: false,
    env: clientEnv(fs.mkdtempSync(join(tmpdir(), 'crux-client-home-'))),
    extendEnv: false,
    timeout: 60_000,
  });
  if (version_.exitCode !== 0 || !String(version_.stdout).includes(version))
    return { skipped: `${pkg}@${version} does not run here: ${String(version_.stderr).trim().split('\n').slice(-1)[0]}` };
  return { bin };
}

/** The environment a client runs in: HOME a temp directory, nothing that would reach a network or an account. */
export function clientEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return testEnv({
    HOME: home,
    XDG_CONFIG_HOME: undefined,
    CLAUDE_CONFIG_DIR: undefined,
    CODEX_HOME: undefined,
    ANTHROPIC_API_KEY: undefined,
    GEMINI_API_KEY: undefined,
    OPENAI_API_KEY: undefined,
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    GEMINI_TELEMETRY_ENABLED: 'false',
    ...extra,
  });
}
