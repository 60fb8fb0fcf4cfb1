// What `tools/list` answers: each tool's name, texts and annotations, and its input and output as JSON Schema.
// Deriving the JSON Schemas from the tools' zod shapes cost a server ~40 M instructions (~12 ms) before it could
// answer a client's first `tools/list`, which every client sends right after `initialize`. The build derives
// them once (build.mjs) and the bundle carries them as JSON text (CRUX_MCP_LISTING), which the server answers
// with; a server run from source (the in-process tests) derives them. test/e2e/mcp.test.ts holds the built
// server's list to the one derived here.
import type * as Sdk from './sdk';
import { TOOLS } from './tools';
import type { Tool } from './tool';

const ERROR_SCHEMA = {
  type: 'object',
  properties: { code: { type: 'integer' }, kind: { type: 'string' }, message: { type: 'string' }, hint: { type: 'string' } },
  required: ['code', 'kind', 'message', 'hint'],
};

const WARNINGS_SCHEMA = {
  type: 'array',
  description: 'The damaged journal lines this call passed over, as the --json document carries them.',
  items: { type: 'object', properties: { file: { type: 'string' }, line: { type: 'integer' }, reason: { type: 'string' } } },
};

/** A tool's arguments as the server validates them: its shape, no member beyond it. */
export const inputSchemaOf = (sdk: typeof Sdk, tool: Tool): Sdk.z.ZodObject => sdk.z.object(tool.input(sdk.z)).strict();

function describeTool(sdk: typeof Sdk, tool: Tool) {
  const { $schema: _, ...inputSchema } = sdk.z.toJSONSchema(inputSchemaOf(sdk, tool), { io: 'input' }) as Record<string, unknown>;
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema,
    // A refusal carries {error} instead of the document: the SDK's Client validates both against this schema.
    outputSchema: {
      type: 'object',
      properties: { ...tool.output, warnings: WARNINGS_SCHEMA, error: ERROR_SCHEMA },
      anyOf: [{ required: Object.keys(tool.output) }, { required: ['error'] }],
    },
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: tool.destructive, idempotentHint: tool.idempotent, openWorldHint: false },
  };
}

export type ToolListing = ReturnType<typeof describeTool>[];

/** The list derived from the tools themselves (what the build stores, and what a server from source answers). */
export const deriveListing = (sdk: typeof Sdk): ToolListing => TOOLS.map((tool) => describeTool(sdk, tool));

// Set by the build (esbuild's define) to the JSON text of deriveListing's answer; absent when run from source.
declare const CRUX_MCP_LISTING: string | undefined;

/** The list the build derived, or undefined where there is none (run from source). */
export const builtListing = (): ToolListing | undefined => (typeof CRUX_MCP_LISTING === 'string' ? (JSON.parse(CRUX_MCP_LISTING) as ToolListing) : undefined);
