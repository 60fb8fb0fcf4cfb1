// Human renderings of session results.
import type { SessionView } from '../domain/session/view';

export const renderSession =
  (verb: string) =>
  ({ session }: { session: SessionView }): string =>
    `${verb} session ${session.session_id}${session.agent ? ` (agent ${session.agent})` : ''}: ${session.status}, ${session.total_tokens} tokens${session.expires_at ? `, expires ${session.expires_at}` : ''}`;
