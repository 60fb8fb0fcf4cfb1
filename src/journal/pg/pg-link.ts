// What the handles on one PostgreSQL store share (pg-connection.ts, PgStore.forCaller): the one connection, the queue
// of operations, and what the running operation holds.
import type { Client, Sql } from './client';
import type { ChainHead } from '../codec/record';
import type { Catalog } from './schema';
import type { ServerFacts } from './pg-server';
import { SeenHeads } from './pg-seen-heads';

/**
 * What every handle on one store shares (PgStore.forCaller): its one connection, the queue its operations wait
 * in, and what the operation running now holds. A handle is what one caller works through (a command; each call of
 * `crux mcp`, each request of `crux ui`): its own reporter, and the mark of whose operation runs (`owner`).
 */
export class PgLink {
  client: Client | undefined;
  catalog: Catalog | undefined;
  /** The transaction `locked` or `consistent` is running, if any: a call from within the operation joins it. */
  active: Sql | undefined;
  /** What the running transaction wrote, for noteCommit once COMMIT is acknowledged. */
  readonly committing: string[] = [];
  /** The chain heads the running transaction leaves, taken as seen once COMMIT is acknowledged. */
  readonly committingHeads: { file: string; head: ChainHead }[] = [];
  /** The server the connection is to (pg-server.ts), once connected; kept after the connection is lost. */
  facts: ServerFacts | undefined;
  /** Chain heads this process has seen, and on which primary (pg-seen-heads.ts): compared with a new primary's journals after a switch. */
  readonly seen = new SeenHeads();
  /** A standby's lag is told once per connection. */
  lagTold = false;
  /** Operations running now (close waits for them). */
  readonly inflight = new Set<Promise<unknown>>();
  /** Fails the operation running now (the connection was lost under it); see untilLost. */
  failRunning: ((error: Error) => void) | undefined;
  /** The tail of the queue of operations (see PgConnection.exclusive). */
  queue: Promise<void> = Promise.resolve();
  /** The handle whose operation runs now: its calls meanwhile are made from within that operation, and join it. */
  owner: object | undefined;
  /** Which journals' derived rows are trusted in the operation running (pg-trust.ts), by file (pg-store.ts). */
  readonly verdicts = new Map<string, { readonly index: boolean; readonly terms: boolean }>();
  /** A call joined the running transaction and may have changed the schema under it (pg-connection.ts locked). */
  schemaMoved = false;
  /** Whether the process was told that a plain store ignores the key given (pg-store.ts readCatalog). */
  keyTold = false;
}
