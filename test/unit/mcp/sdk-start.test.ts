// The SDK as `crux mcp` loads it (src/cli/mcp/sdk.ts): zod parses without compiling a parser per schema
// (zod-jitless.ts), which a server answering a few messages with many schemas once each pays at every start.
import { describe, expect, it, vi } from 'vitest';

describe('the MCP SDK as crux loads it', () => {
  it('parses a client’s messages without generating code (zod’s jitless setting)', async () => {
    const made = vi.spyOn(globalThis, 'Function');
    const sdk = await import('../../../src/cli/mcp/sdk');
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
    };
    expect(sdk.JSONRPCMessageSchema.safeParse(initialize).success).toBe(true);
    const args = sdk.z.object({ session_id: sdk.z.string(), ttl: sdk.z.string().optional() });
    expect(args.safeParse({ session_id: 's1' }).success).toBe(true);
    expect(args.safeParse({ session_id: 1 }).success).toBe(false);
    expect(made).not.toHaveBeenCalled();
  });
});
