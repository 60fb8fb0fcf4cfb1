// The script the program was run as: main's argv[1], the process's own, or bin/crux for a test that runs the
// program in-process (test/helpers/run-cli.ts), where process.argv[1] is the test runner's. Read by what names
// crux's own script in an installed entry (install/self.ts).
let script: string | undefined;

export function setStartedAs(path: string | undefined): void {
  script = path;
}

export const startedAs = (): string | undefined => script ?? process.argv[1];
