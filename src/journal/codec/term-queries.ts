// What a store's term rows answer without the entities' text (JournalStore.readTermRows, countTerms): a page of
// them filtered and ordered by their facts, and counts by term.

/**
 * A page of term rows (JournalStore.readTermRows). Facts are numbered from 1 in the row's facts text (TermEntry:
 * numbers joined by spaces); each hit's `has` is empty.
 */
export interface TermRowsQuery {
  /** Only entities holding every one of these terms (none: every entity). */
  readonly among: readonly string[];
  /** Only entities whose fact `fact` reads `equals`. */
  readonly where?: { readonly fact: number; readonly equals: string } | undefined;
  /** Only entities whose key starts with this. */
  readonly prefix?: string | undefined;
  /** The order: by each fact as a number, the first first; ties by the next. */
  readonly order: readonly { readonly fact: number; readonly descending: boolean }[];
  readonly offset: number;
  readonly limit: number;
  /** How many match in all (`total`); else total is undefined. */
  readonly count: boolean;
}

/**
 * What JournalStore.countTerms counts over the live entities' term rows: how many there are and how many have fact
 * `where.fact` equal to `where.equals` — in all, among those holding no term that starts with `prefix`, and for
 * each such term among those holding it.
 */
export interface TermCounts {
  readonly all: { readonly entities: number; readonly matching: number };
  readonly without: { readonly entities: number; readonly matching: number };
  readonly terms: readonly { readonly term: string; readonly entities: number; readonly matching: number }[];
}
