// What an import did, as session and case imports both report it.
export interface ImportSummary {
  /** Lines written: created plus replaced. */
  readonly imported: number;
  readonly created: number;
  readonly replaced: number;
}
