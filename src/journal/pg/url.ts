// A PostgreSQL store's URL: what crux connects to, which schema holds its tables, and how messages name it.
import { invalid } from '../../shared/errors';

export const DEFAULT_SCHEMA = 'crux';
/** Schema names crux accepts: plain lower-case identifiers, so no SQL ever needs to quote one from input. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StoreUrl {
  /** The URL handed to the client, without crux's own parameters (`schema`). */
  readonly connect: string;
  readonly schema: string;
  /** How every message names the server: `postgres://user@host:port/db`, never the password. */
  readonly label: string;
}

/** Whether a --store / CRUX_STORE value names a PostgreSQL store. */
export const isPostgresUrl = (value: string): boolean => /^postgres(ql)?:\/\//i.test(value);

export function parseStoreUrl(value: string, what = '--store'): StoreUrl {
  if (!isPostgresUrl(value)) {
    throw invalid(`${what} must be a postgres:// or postgresql:// URL`, 'for a data directory, use --data-dir');
  }
  let url: URL;
  try {
    // WHATWG URL parses unknown schemes without a host part; an http: stand-in gives host, port and userinfo.
    url = new URL(value.replace(/^postgres(ql)?:/i, 'http:'));
  } catch {
    throw invalid(`${what} is not a valid URL: ${labelOfText(value)}`, 'postgres://user@host:5432/database?schema=crux');
  }
  const schemas = url.searchParams.getAll('schema');
  if (schemas.length > 1) throw invalid(`${what} names the schema more than once`);
  const schema = schemas[0] ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema)) {
    throw invalid(`the schema ${JSON.stringify(schema)} is not a lower-case identifier`, 'e.g. ?schema=crux or ?schema=team_a');
  }
  url.searchParams.delete('schema');
  const user = url.username === '' ? '' : `${url.username}@`;
  const label = `postgres://${user}${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  const scheme = value.slice(0, value.indexOf(':'));
  return { connect: `${scheme}:${url.href.slice('http:'.length)}`, schema, label };
}

/** A URL that did not parse, named without anything that could be a password. */
function labelOfText(value: string): string {
  const at = value.lastIndexOf('@');
  const rest = at < 0 ? value.slice(value.indexOf('://') + 3) : value.slice(at + 1);
  return `postgres://${rest.split(/[/?#]/)[0]}`;
}
