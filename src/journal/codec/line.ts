// Where a record sits in its journal, what is wrong with a line, and who is handed each record a read folds.
import type { JournalRecord } from './record';

/** Where a line sits in its file: 1-based line number, byte offset, byte length without the \n. */
export interface LinePosition {
  readonly line: number;
  readonly offset: number;
  readonly length: number;
}

export interface LineProblem extends LinePosition {
  readonly reason: string;
  /** True when the line's own bytes are unusable (it is not applied); false for chain/sequence findings. */
  readonly skipped: boolean;
}

export type RecordSink = (record: JournalRecord, at: LinePosition) => void;
