// Running the built bin/crux on a pseudo-terminal (util-linux `script`), as a person at a terminal meets it.
import { execa } from 'execa';
import { CRUX, testEnv } from './cli';

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function ttyEnv(): NodeJS.ProcessEnv {
  const env = testEnv();
  delete env.COLUMNS;
  delete env.FORCE_COLOR;
  return env;
}

/**
 * Runs crux (or `entry`, the words that start it) on a pseudo-terminal of `cols` columns; returns what the
 * screen received (CR LF as LF).
 */
export async function onTty(
  dir: string,
  args: string[],
  cols = 80,
  env: Record<string, string> = {},
  entry: readonly string[] = [CRUX],
): Promise<{ exitCode: number; screen: string }> {
  // Set after stty: the shell rewrites COLUMNS when the window size changes.
  const exports = Object.entries(env)
    .map(([k, v]) => `export ${k}=${quote(v)}; `)
    .join('');
  const command = `stty cols ${cols} rows 50; ${exports}${[...entry, '--data-dir', dir, ...args].map(quote).join(' ')}`;
  const run = await execa('script', ['-qefc', command, '/dev/null'], {
    reject: false,
    stripFinalNewline: false,
    env: ttyEnv(),
    extendEnv: false,
    stdin: 'ignore',
  });
  return { exitCode: run.exitCode ?? -1, screen: String(run.stdout).replace(/\r\n/g, '\n') };
}

const SGR = /\u001b\[[0-9;]*m/g;

/** Columns a line takes on screen (ASCII and box characters, one column each; colour none). */
export const screenWidth = (line: string) => [...line.replace(SGR, '')].length;
