// A refusal of Node's permission model (NODE_OPTIONS=--permission; Node 20 names it --experimental-permission),
// said as what it is: the resource refused and the flag that allows it. Shared by the error table (errors.ts) and
// bin/crux (cli/launch.ts, which must say it before any bundle loads): no import.

/** The flag that allows each kind of access the model refuses (Node's `permission` field of ERR_ACCESS_DENIED). */
const ALLOWING: Readonly<Record<string, string>> = {
  FileSystemRead: '--allow-fs-read',
  FileSystemWrite: '--allow-fs-write',
  ChildProcess: '--allow-child-process',
  WorkerThreads: '--allow-worker',
  Addons: '--allow-addons',
  WASI: '--allow-wasi',
};

export interface PermissionRefusal {
  /** `permission denied by Node's permission model: <resource> (ERR_ACCESS_DENIED)`. */
  readonly message: string;
  /** The flag that is missing, for what. */
  readonly missing: string;
}

/** The refusal `caught` is, or undefined when it is not one. `where` names the resource when Node's error does not. */
export function permissionRefusal(caught: unknown, where: string): PermissionRefusal | undefined {
  if (caught === null || typeof caught !== 'object' || (caught as { code?: unknown }).code !== 'ERR_ACCESS_DENIED') return undefined;
  const { resource, permission } = caught as { resource?: unknown; permission?: unknown };
  const what = typeof resource === 'string' && resource !== '' ? resource : where;
  const flag = typeof permission === 'string' ? ALLOWING[permission] : undefined;
  return {
    message: `permission denied by Node's permission model: ${what} (ERR_ACCESS_DENIED)`,
    missing: flag === undefined ? `a permission the model refused (${String(permission)})` : `${flag}=${what}`,
  };
}
