// `crux journal encrypt`, `crux journal rekey --new-key-file <file>`, `crux journal decrypt` (SPEC §13): every
// record of every journal, history/ and quarantine/ rewritten with the store key, a new one, or none.
import { Command } from 'commander';
import { contextOf, type GlobalOptions } from '../../context';
import { resolveStore } from '../../store';
import { readStoreKeyFile, storeKeyFrom } from '../../key-file';
import { changeStoreKey } from '../../operations/store-keys';
import { emit } from '../../../output/emit';
import { renderKeyChange, type KeyChange } from '../../../output/store';

const WHAT: Record<KeyChange, string> = {
  encrypt:
    'encrypt a plain store with the key of --key-file (or CRUX_KEY_FILE): every state and free text in the journals, history/ and quarantine/, re-chained',
  rekey: 'rewrite an encrypted store from its key (--key-file) to the key of --new-key-file, everywhere, re-chained',
  decrypt: 'turn an encrypted store (its key: --key-file) back into a plain one, everywhere, re-chained',
};

const EXAMPLE: Record<KeyChange, string> = {
  encrypt: 'crux key new --out ~/.config/crux/store.key\n  crux --key-file ~/.config/crux/store.key journal encrypt',
  rekey: 'crux key new --out new.key\n  crux --key-file old.key journal rekey --new-key-file new.key',
  decrypt: 'crux --key-file ~/.config/crux/store.key journal decrypt',
};

function makeKeyChangeCommand(change: KeyChange): Command {
  const command = new Command(change).description(WHAT[change]);
  if (change === 'rekey') command.requiredOption('--new-key-file <file>', 'the new key (a file of mode 0600, as crux key new --out writes)');
  return command
    .addHelpText(
      'after',
      `\nAll or nothing: a crash leaves the store as it was or as it is to be; a run\nstopped midway is run again. cache/ is rebuilt. docs/keys.md.\n\nExamples:\n  ${EXAMPLE[change]}`,
    )
    .action(async (opts: { newKeyFile?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const given = storeKeyFrom(globals.keyFile, process.env);
      const next = opts.newKeyFile === undefined ? undefined : readStoreKeyFile(opts.newKeyFile, '--new-key-file');
      const ctx = contextOf({ ...globals, keyFile: undefined }, { ...process.env, CRUX_KEY_FILE: undefined });
      const report = await changeStoreKey(ctx, resolveStore(globals, process.env), change, given, next);
      await emit(ctx, report, renderKeyChange);
    });
}

export const makeEncryptCommand = () => makeKeyChangeCommand('encrypt');
export const makeRekeyCommand = () => makeKeyChangeCommand('rekey');
export const makeDecryptCommand = () => makeKeyChangeCommand('decrypt');
