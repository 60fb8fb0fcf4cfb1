// The hooks of crux's own tests: every one a CRUX_TEST_* variable, read here and nowhere else (SPEC §1), and listed
// in crux(1)'s ENVIRONMENT as for tests only. Each is inert unless set: crash at a named point, tear a write, log
// the lock's entries and waiters, hold the lock, pick the lock's socket addressing, pretend a filesystem, and size
// the derived files' merges, spills, snapshot rewrites and hashes down so that tests reach them with a few records,
// pause a PostgreSQL reader before it saves a snapshot, and give a silent PostgreSQL server less time.

export const TEST_HOOKS = [
  /** `<point>[#n]`: SIGKILL at that point (its n-th pass). */
  'CRUX_TEST_CRASH_AT',
  /** `<bytes>`: an append writes that many bytes of its batch, then SIGKILL. */
  'CRUX_TEST_TORN_WRITE',
  /** `<file>`: each entry to and exit from the lock, appended. */
  'CRUX_TEST_LOCK_LOG',
  /** `<file>`: each time a waiter sleeps, and on whom, appended. */
  'CRUX_TEST_LOCK_WAITS',
  /** `<ms>`: stay that long inside the lock. */
  'CRUX_TEST_LOCK_HOLD_MS',
  /** `procfd|chdir|direct`: how the lock's sockets are addressed. */
  'CRUX_TEST_LOCK_ADDRESS',
  /** `<name|0xmagic>`: the filesystem the lock directory pretends to be on. */
  'CRUX_TEST_FS_TYPE',
  /** `<n>`: merge the index log after n entries (and scale its levels down). */
  'CRUX_TEST_INDEX_LOG_ENTRIES',
  /** `<n>`: the index's partition size alone. */
  'CRUX_TEST_INDEX_PART_ENTRIES',
  /** `<n>`: spill and fold a rebuilt index after fewer entries. */
  'CRUX_TEST_REBUILD_ENTRIES',
  /** `<bits>`: keep that many low bits of the index's 56-bit key hash, so that keys share one. */
  'CRUX_TEST_HASH56_BITS',
  /** `<bytes>`: rewrite a snapshot once that much journal follows it. */
  'CRUX_TEST_SNAPSHOT_TAIL_BYTES',
  /** `<bytes>`: the size of a snapshot rewrite's steps. */
  'CRUX_TEST_SNAPSHOT_STEP_BYTES',
  /** `<bytes>`: build a lost snapshot by streaming from journals of that size on. */
  'CRUX_TEST_STREAM_BYTES',
  /** `<n>`: rows a PostgreSQL store's paged reads fetch (and a restore writes) per statement. */
  'CRUX_TEST_FETCH_ROWS',
  /** `<n>`: entities a PostgreSQL rebuild of derived rows folds and writes per round. */
  'CRUX_TEST_KEYS_PER_ROUND',
  /** `<file>`: a PostgreSQL reader about to save a snapshot creates the file and waits until it is removed. */
  'CRUX_TEST_SNAPSHOT_PAUSE',
  /** `<ms>`: how long a PostgreSQL server may stay silent past the lock wait before the client gives it up. */
  'CRUX_TEST_STALL_GRACE_MS',
] as const;

export type TestHook = (typeof TEST_HOOKS)[number];

/** The value of a test hook in this process's environment: undefined (the hook is off) everywhere but in tests. */
export const testHook = (name: TestHook): string | undefined => process.env[name];
