// The MCP SDK and zod, bundled apart as dist/mcp.cjs (build.mjs) and loaded only by `crux mcp`, so that no
// other command reads or compiles them.
import './zod-jitless';
export { Server } from '@modelcontextprotocol/sdk/server/index.js';
export { ErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
export type { ServerResult } from '@modelcontextprotocol/sdk/types.js';
export type { jsonSchemaValidator as JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
export { z } from 'zod';
