// A client's configuration file, read and replaced the way every install and uninstall needs: through symlinks
// (a dotfiles link stays a link; its target is replaced), atomically (a new file beside the target, fsynced,
// renamed over it), keeping the file's owner and mode.
import { fs } from '../../shared/fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { invalid } from '../../shared/errors';
import { fsyncDir, ownershipOf, writeNewFileDurable, type Ownership } from '../../shared/durable-fs';

export interface ConfigFile {
  /** The path the client reads (maybe a symlink). */
  readonly path: string;
  /** The file that holds the bytes: `path` with every symlink followed, whether or not it exists yet. */
  readonly target: string;
  /** The current text; '' when the file does not exist. */
  readonly text: string;
  readonly exists: boolean;
  readonly ownership: Ownership | undefined;
}

const MAX_LINKS = 40;

/** `path` with its symlinks followed as far as they lead (a dangling link names the file it would create). */
function targetOf(path: string): string {
  let current = resolve(path);
  for (let hops = 0; hops < MAX_LINKS; hops++) {
    let link: string;
    try {
      link = fs.readlinkSync(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // EINVAL: not a link; ENOENT: nothing there yet. Either way this is the file to write.
      if (code === 'EINVAL' || code === 'ENOENT') return current;
      throw invalid(`cannot read ${path} (${code})`, 'nothing was written');
    }
    current = isAbsolute(link) ? link : resolve(dirname(current), link);
  }
  throw invalid(`${path}: too many levels of symbolic links`, 'nothing was written');
}

export function readConfigFile(path: string): ConfigFile {
  const target = targetOf(path);
  try {
    return { path, target, text: fs.readFileSync(target, 'utf8'), exists: true, ownership: ownershipOf(target) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { path, target, text: '', exists: false, ownership: undefined };
    throw invalid(`cannot read ${path} (${code})`, 'nothing was written');
  }
}

/** Replaces the file's target with `text`: a new file beside it (same owner and mode), fsynced, renamed over it. */
export function replaceConfigFile(file: ConfigFile, text: string): void {
  const dir = dirname(file.target);
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw invalid(`cannot create ${dir} (${(error as NodeJS.ErrnoException).code})`, 'nothing was written');
  }
  const temp = join(dir, `.${basename(file.target)}.crux-${process.pid}.tmp`);
  try {
    writeNewFileDurable(temp, text, { like: file.ownership });
    // A new file is 0644 as an editor makes it (a project's .mcp.json is committed); it holds no secret of crux's.
    if (file.ownership === undefined) fs.chmodSync(temp, 0o644);
    fs.renameSync(temp, file.target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    throw code === undefined ? error : invalid(`cannot write ${file.path} (${code})`, 'nothing was written');
  }
  fsyncDir(dir);
}
