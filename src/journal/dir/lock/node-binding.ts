// Node's own bindings, the native half of a few of its modules, reached without loading their JavaScript: the
// pipe binding (lock-socket.ts: a listening Unix socket without node:net and its streams) and zlib's
// (derived/checksum.ts: CRC-32 without node:zlib and its streams). process.binding is deprecated (DEP0111) in the
// documentation only: --pending-deprecation makes it warn, and --throw-deprecation makes that warning an
// exception thrown on the next tick, out of reach of any catch. Deprecation warnings are off for the one
// synchronous call (process.noDeprecation, which emitWarning reads as it is called), so neither reaches a user.
// Where a binding may not be had (refused under the permission model, or not in this Node) the answer is
// undefined, and the caller loads the public module instead.

type BindingName = 'pipe_wrap' | 'zlib';

/** The binding `name`, or undefined where it cannot be had. Each caller asks once and keeps the answer. */
export function nodeBinding(name: BindingName): Record<string, unknown> | undefined {
  const quiet = process.noDeprecation;
  process.noDeprecation = true;
  try {
    const binding = (process as unknown as { binding(name: string): unknown }).binding(name);
    return binding !== null && typeof binding === 'object' ? (binding as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  } finally {
    process.noDeprecation = quiet;
  }
}
