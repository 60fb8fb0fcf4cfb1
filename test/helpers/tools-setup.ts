// vitest global setup: one line naming the system tools this machine lacks and how to install them (their tests
// are skipped); under CRUX_REQUIRE_TOOLS=1 (CI) a missing tool stops the run before any test.
import { installLine, missingTools, toolsRequired } from './tools';

export default function setup(): void {
  // Once a run: vitest runs a global setup for each project (vitest.config.mts), in its one main process.
  if (process.env.CRUX_TEST_TOOLS_BY === String(process.pid)) return;
  process.env.CRUX_TEST_TOOLS_BY = String(process.pid);
  const missing = missingTools();
  if (missing.length === 0) return;
  if (toolsRequired()) throw new Error(`CRUX_REQUIRE_TOOLS=1 but no ${missing.join(', ')} on PATH (${installLine(missing)})`);
  console.warn(`crux tests: no ${missing.join(', ')} on PATH: the tests that need them are skipped (${installLine(missing)})`);
}
