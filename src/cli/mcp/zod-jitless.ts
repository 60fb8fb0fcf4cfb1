// zod parses without generating code (its `jitless` setting), in `crux mcp` and wherever the SDK is loaded: by
// default each object schema's first parse compiles a parser of its own with `new Function`, which pays back over
// many parses of one schema, and a server answers a client's few messages with many schemas once each (~3 ms of
// the `initialize` answer). zod reads the setting when it makes a schema, so this module runs before zod's: it is
// sdk.ts's first import, and zod keeps its settings on globalThis.
const holder = globalThis as { __zod_globalConfig?: { jitless?: boolean } };
holder.__zod_globalConfig ??= {};
holder.__zod_globalConfig.jitless = true;
