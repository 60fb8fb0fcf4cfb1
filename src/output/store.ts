// The human rendering of `crux store init`: what was created (or would be), or that the store was ready.
import type { InitReport } from '../journal/core/store-boundary';
import { printable } from '../shared/printable';

export function renderInit(r: InitReport): string {
  const store = printable(r.store);
  const version = r.schema_version === null ? '' : ` (schema version ${r.schema_version})`;
  if (r.created.length === 0) return `nothing to do: ${store} is ready${version}`;
  const what = r.created.map(printable).join(', ');
  return r.printed ? `would create ${what}: nothing was changed` : `${store}: created ${what}${version}`;
}
