// What every case command hands the store.
import type { Context } from '../../context';
import type { CaseScope } from '../../../domain/case/store';

export const scopeOf = (ctx: Context): CaseScope => ({ dir: ctx.dataDir, now: ctx.now, actor: ctx.actor });
