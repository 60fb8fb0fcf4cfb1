// When derived rows (index rows, term rows) may be believed without reading them all (SPEC §3, §11).
//
// Each derived table has a binding row (`secondary_indexes`, `term_indexes`): the journal's head the rows follow
// (line and hash of its last row) and a `trusted` flag. Crux writes derived rows only under the writers' lock, in
// a transaction that sets `crux.writer` (set_config(…, true): for that transaction alone). Two statement-level
// triggers on every derived table — after insert, update or delete, and after truncate — clear the flag when any
// other transaction writes the table. A read believes the rows when, in one indexed look-up, the binding names
// the head the journal has now and says trusted, and the catalog (read by every operation anyway) shows both
// triggers on the table, enabled always, calling the function whose source is the one below: O(1) per call,
// whatever the tables hold. Otherwise it folds the journal (the same answer, slower) until a write or
// `journal check --repair` rebuilds the rows and sets the flag again.
//
// What this catches, and how:
// - a row deleted, added or edited, or the table truncated, by anything but crux: the trigger clears the flag,
//   in the same transaction as the change, so the change cannot commit without it;
// - a trigger dropped or disabled (`alter table … disable trigger`), the function replaced or dropped: the
//   catalog no longer shows the guard, so nothing is trusted (the next write makes the guard again and rebuilds);
// - `session_replication_role = replica` (which silences ordinary triggers): the triggers are ENABLE ALWAYS;
// - rows changed while the flag was cleared and then changed back: still untrusted until rebuilt;
// - the journal's own rows appended or removed at the end: the head no longer matches the binding.
// What it does not catch: someone who writes the rows and sets `crux.writer` himself, or sets the flag again by
// hand, forges crux's own write, as one could rewrite a cache file and its checksum; `journal check` still
// compares every row with a replay and reports the disagreement (9).
import type { Sql } from './client';

/** The trigger function's name; its body is checked by the catalog query (schema.ts readCatalog). */
export const TRUST_FUNCTION = 'crux_derived_changed';
/** The two triggers every derived table carries. */
export const GUARD_TRIGGERS = ['crux_derived_rows', 'crux_derived_truncate'] as const;
/** The setting crux's own writing transactions carry (transaction-local). */
const WRITER_SETTING = 'crux.writer';

/**
 * tg_argv[0]: the binding table; tg_argv[1]: the journal (its file name), whose binding loses its trust. One line:
 * the catalog compares the function's source with this text, and the DDL around it is re-indented when printed.
 */
export const TRUST_FUNCTION_BODY =
  ` begin if coalesce(current_setting('${WRITER_SETTING}', true), '') <> 'on' then` +
  ` execute format('update %I.%I set trusted = false where journal = $1', tg_table_schema, tg_argv[0]) using tg_argv[1];` +
  ` end if; return null; end `;

/** The function (schema version 3; made again with a guard, should it have been dropped or replaced). */
export const trustFunctionDdl = (s: string): string =>
  `create or replace function ${s}.${TRUST_FUNCTION}() returns trigger language plpgsql as $crux$${TRUST_FUNCTION_BODY}$crux$;`;

/**
 * The two triggers on a derived table (replacing any of their names), enabled always; the rows they guard are
 * untrusted from then on until rebuilt (they may have been written while the table was unguarded).
 */
export function guardDdl(s: string, table: string, binding: string, file: string): string {
  const args = `'${binding}', '${file.replace(/'/g, "''")}'`;
  return `
  drop trigger if exists ${GUARD_TRIGGERS[0]} on ${s}.${table};
  drop trigger if exists ${GUARD_TRIGGERS[1]} on ${s}.${table};
  create trigger ${GUARD_TRIGGERS[0]} after insert or update or delete on ${s}.${table}
    for each statement execute function ${s}.${TRUST_FUNCTION}(${args});
  create trigger ${GUARD_TRIGGERS[1]} after truncate on ${s}.${table}
    for each statement execute function ${s}.${TRUST_FUNCTION}(${args});
  alter table ${s}.${table} enable always trigger ${GUARD_TRIGGERS[0]};
  alter table ${s}.${table} enable always trigger ${GUARD_TRIGGERS[1]};
  update ${s}.${binding} set trusted = false where journal = ${args.split(', ')[1]};`;
}

/** Marks the running transaction as crux's writer, so that its derived writes keep their trust. */
export async function markWriter(sql: Sql): Promise<void> {
  await sql`select set_config(${WRITER_SETTING}, 'on', true)`;
}
