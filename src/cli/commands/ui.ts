// `crux ui`: a local, read-only dashboard of the store over HTTP (SPEC §12); the server loads only here.
import { Command } from 'commander';
import type { GlobalOptions } from '../context';
import { parseCount } from '../parse';
import { invalid } from '../../shared/errors';

export function makeUiCommand(): Command {
  return new Command('ui')
    .description('serve a read-only dashboard of the store on a local port, until interrupted (prints its URL with an access token made for this run)')
    .option('--port <n>', 'the port to listen on (default 0: a free one)')
    .option('--bind <addr>', 'the address to listen on (default 127.0.0.1, loopback only)')
    .option('--open', 'open the URL in the desktop browser (xdg-open, open)')
    .addHelpText(
      'after',
      [
        '',
        'Pages: overview, sessions (state, history and the diff between versions),',
        'cases (retrieve, browse), handoffs (a graph of agents), journal (check,',
        'quarantine). Every page has a JSON twin under /api/. The URL carries an access',
        'token made anew each time crux ui starts: it works as often as it is opened,',
        'in any browser, until this server stops, and is exchanged for a cookie;',
        'anything else is refused (401, 403, 405). Runs until interrupted (Ctrl-C, or',
        'SIGTERM for a server started in the background).',
        '',
        'Examples:',
        '  crux ui',
        '  crux ui --port 8377 --open',
        '  crux --store postgres://crux@db/crux ui',
      ].join('\n'),
    )
    .action(async (opts: { port?: string; bind?: string; open?: boolean }, command: Command) => {
      const port = opts.port === undefined ? 0 : parseCount(opts.port, '--port');
      if (port > 65535) throw invalid(`--port must be at most 65535: ${JSON.stringify(opts.port)}`);
      const bind = opts.bind ?? '127.0.0.1';
      if (bind.trim() === '') throw invalid('--bind must not be empty', 'e.g. --bind 127.0.0.1');
      const { serveUi } = await import('../ui/server');
      await serveUi(command.optsWithGlobals<GlobalOptions>(), { port, bind, open: opts.open === true });
    });
}
