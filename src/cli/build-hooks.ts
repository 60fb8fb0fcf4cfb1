// What only the build asks of a bundle (build.mjs): write the shipped code caches of the bundles it names, and run
// a list of command lines in one process so that those caches cover them. The build's own loader (a script made
// in a scratch directory, never packed) sets them in a global under a registered symbol before it runs a bundle;
// no variable of the environment and no argument reaches them, so an installed crux runs the line it is given and
// writes nothing of the package (SPEC §1). This file is built into bin/crux (src/cli/launch.ts): node:* only.

export interface BuildHooks {
  /** The bundles (file names in dist/) whose shipped code cache this process writes at exit. */
  readonly writeCodeCache: readonly string[];
  /** The command lines this process runs in turn, instead of its own. */
  readonly warmUp?: readonly string[][];
}

/** The global the build's loader sets (build.mjs). */
export const BUILD_HOOKS = Symbol.for('crux.build-hooks');

/** The build's hooks in this process: undefined in every process the build did not start. */
export const buildHooks = (): BuildHooks | undefined => (globalThis as { [BUILD_HOOKS]?: BuildHooks })[BUILD_HOOKS];
