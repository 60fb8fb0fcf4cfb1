// `crux key …`: the store key of an encrypted store (SPEC §13). `crux key new [--out <file>]`: a new store key
// (`crux-key-v1:` and 32 random bytes, base64url) and its id. It writes nothing but `--out`'s file (created 0600,
// never over an existing one); the store is untouched.
import { Command } from 'commander';
import { fs } from '../../../shared/fs';
import type { GlobalOptions } from '../../context';
import { writeJson } from '../../../output/emit';
import { writeStderr, writeStdout } from '../../../output/stdout';
import { newStoreKey } from '../../../shared/store-key';
import { environmentError, invalid } from '../../../shared/errors';
import { makeGroup } from '../group';

/** Creates `path` holding `text`, readable by its owner alone; an existing file is refused (5), never replaced. */
function writeKeyFile(path: string, text: string): void {
  let fd: number;
  try {
    fd = fs.openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw invalid(`${path} exists: a key file is never overwritten`, 'choose another path');
    throw environmentError(error, path) ?? invalid(`cannot create ${path} (${(error as NodeJS.ErrnoException).code})`);
  }
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(path, { force: true });
    throw environmentError(error, path) ?? error;
  }
  fs.closeSync(fd);
}

function makeKeyNewCommand(): Command {
  return new Command('new')
    .description('print a new store key and its id (with --out, write it to a new file of mode 0600 instead); nothing else is written')
    .option('--out <file>', 'create <file> (mode 0600; an existing file is refused) holding the key, and print only its id')
    .addHelpText(
      'after',
      [
        '',
        'The key is crux-key-v1: and 32 random bytes in base64url; its id (k- and 16',
        'hex digits) names it in the store and in messages. Keep the file where only',
        'you can read it: crux refuses a key file others may read (exit 5). A lost key',
        'cannot be recovered, nor what it encrypted (docs/keys.md).',
        '',
        'Examples:',
        '  crux key new --out ~/.config/crux/store.key',
        '  CRUX_KEY_FILE=~/.config/crux/store.key crux session put build-42 \'{"step": 1}\'',
      ].join('\n'),
    )
    .action((opts: { out?: string }, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const key = newStoreKey();
      if (opts.out !== undefined) writeKeyFile(opts.out, `${key.text}\n`);
      if (globals.json === true)
        writeJson(`${JSON.stringify(opts.out === undefined ? { key: key.text, key_id: key.id } : { key_id: key.id, file: opts.out })}\n`);
      else if (opts.out !== undefined) writeStdout(`${key.id}\n`);
      else {
        writeStdout(`${key.text}\n`);
        if (globals.quiet !== true) writeStderr(`crux: key id ${key.id}; keep the key in a file only you can read (chmod 600)\n`);
      }
    });
}

const COMMANDS = {
  new: makeKeyNewCommand,
};

export function makeKeyCommand(wanted?: string): Command {
  return makeGroup('key', 'the key of an encrypted store (docs/keys.md)', COMMANDS, wanted);
}
