// The test run's own directory (test/helpers/temp-root.ts) goes whole at the end, unreadable directories
// included, and is left in place, with a warning, over a mount a test left in it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { removeTree } from '../helpers/temp-root';

const tree = () => {
  const root = fs.mkdtempSync(join(tmpdir(), 'crux-temp-root-'));
  fs.mkdirSync(join(root, 'a', 'b'), { recursive: true });
  fs.writeFileSync(join(root, 'a', 'b', 'f'), 'x');
  fs.symlinkSync('/etc', join(root, 'a', 'etc'));
  return root;
};

describe('the test run’s directory', () => {
  it('is removed whole, with directories made unreadable and links not followed', () => {
    const root = tree();
    fs.chmodSync(join(root, 'a', 'b'), 0o000);
    fs.chmodSync(join(root, 'a'), 0o000);
    removeTree(root);
    expect(fs.existsSync(root)).toBe(false);
    expect(fs.existsSync('/etc/hostname') || fs.existsSync('/etc/passwd')).toBe(true);
  });

  const canMount = spawnSync('sh', ['-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d && rmdir $d'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!canMount)('is left in place, with a warning, over a mount left under it', () => {
    const root = tree();
    const mount = join(root, 'a', 'm');
    fs.mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mount]);
    fs.writeFileSync(join(mount, 'kept'), 'x');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      removeTree(root);
      expect(warn.mock.calls.join('\n')).toMatch(/left .* in place: a test left .*\/a\/m mounted under it/);
      expect(fs.readFileSync(join(mount, 'kept'), 'utf8')).toBe('x');
    } finally {
      warn.mockRestore();
      execFileSync('umount', [mount]);
      removeTree(root);
    }
    expect(fs.existsSync(root)).toBe(false);
  });
});
