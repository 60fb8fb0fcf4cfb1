// The server's stdio transport (the SDK's Transport contract), in place of the SDK's StdioServerTransport,
// whose read buffer closes the connection — silently, the server then exits 0 — on a message over 10 MiB,
// and which answers nothing to a line that is not JSON. Here every line gets an answer or is delivered:
// not JSON → -32700 Parse error (id null); JSON but not a JSON-RPC message → -32600 Invalid Request; over the
// limit → -32600 naming the limit, with the request's id when the line had one, and the server keeps serving.
// A line is kept as its chunks and joined once, at its newline (no copy per chunk, as the SDK's buffer does).
// It also counts the requests it delivers against the responses sent, so that the server can finish every
// request it read before its input ended.
import { writeStderr } from '../../output/stdout';
import { TopLevelId } from './top-level-id';

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown; result?: unknown; error?: unknown };

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export interface TransportOptions {
  /** The longest line (bytes, without its newline) read as a message. */
  readonly maxMessageBytes: number;
  /** Whether a parsed value is a JSON-RPC message the SDK takes (its own schema). */
  readonly isMessage: (value: unknown) => boolean;
  readonly write: (text: string) => void;
}

export class LineTransport {
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onclose?: (() => void) | undefined;

  private parts: Buffer[] = [];
  private bytes = 0;
  /** Set while the rest of an oversized line is read and dropped. */
  private oversized: TopLevelId | undefined;
  private open = 0;
  private wake: (() => void) | undefined;
  private readonly ended: Promise<void>;
  private endInput!: () => void;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly options: TransportOptions,
  ) {
    this.ended = new Promise((resolve) => (this.endInput = resolve));
  }

  private readonly onData = (chunk: Buffer) => {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a, from); nl !== -1; nl = chunk.indexOf(0x0a, from)) {
      this.take(chunk.subarray(from, nl));
      this.lineEnded();
      from = nl + 1;
    }
    if (from < chunk.length) this.take(chunk.subarray(from));
  };

  private readonly onEnd = () => {
    // A last line without its newline (`printf '…' | crux mcp`) is a line all the same.
    if (this.bytes > 0 || this.oversized !== undefined) this.lineEnded();
    this.endInput();
  };

  private readonly onError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.once('close', this.onEnd);
    this.input.on('error', this.onError);
  }

  async send(message: Message): Promise<void> {
    this.options.write(`${JSON.stringify(message)}\n`);
    if (message.id !== undefined && message.method === undefined && (message.result !== undefined || message.error !== undefined)) {
      this.open -= 1;
      if (this.open <= 0) this.wake?.();
    }
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.off('error', this.onError);
    this.parts = [];
    this.onclose?.();
  }

  /**
   * Resolves once input has ended and every request read has its response — or once no call has run for a
   * second (a request the SDK never answers, or one the client cancelled, must not keep the server up).
   */
  async finished(busy: () => boolean): Promise<void> {
    await this.ended;
    if (this.open <= 0) return;
    await new Promise<void>((resolve) => {
      let idle = 0;
      const timer = setInterval(() => {
        idle = busy() ? 0 : idle + 1;
        if (idle >= 20) done();
      }, 50);
      const done = () => {
        clearInterval(timer);
        resolve();
      };
      this.wake = done;
    });
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.bytes += piece.length;
    if (this.oversized !== undefined) {
      this.oversized.feed(piece);
      return;
    }
    this.parts.push(piece);
    if (this.bytes > this.options.maxMessageBytes) {
      // Past the limit nothing more of the line is kept: only its top-level id is looked for, to answer it.
      this.oversized = new TopLevelId();
      for (const part of this.parts) this.oversized.feed(part);
      this.parts = [];
    }
  }

  private lineEnded(): void {
    const { bytes, oversized } = this;
    const line = oversized === undefined ? Buffer.concat(this.parts, bytes) : undefined;
    this.parts = [];
    this.bytes = 0;
    this.oversized = undefined;
    if (oversized !== undefined) {
      const limit = this.options.maxMessageBytes;
      writeStderr(`crux: refused a message of ${bytes} bytes, over the limit of ${limit} bytes; still serving\n`);
      this.reply(oversized.id ?? null, INVALID_REQUEST, `the message is ${bytes} bytes, over the limit of ${limit} bytes: refused, nothing was done`, {
        limit_bytes: limit,
        message_bytes: bytes,
      });
      return;
    }
    const text = line!.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: Message;
    try {
      value = JSON.parse(text) as Message;
    } catch (error) {
      this.reply(null, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
      return;
    }
    if (!this.options.isMessage(value)) {
      const id = value !== null && typeof value === 'object' && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null;
      this.reply(id, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC 2.0 message');
      return;
    }
    if (value.id !== undefined && value.method !== undefined) this.open += 1;
    this.onmessage?.(value);
  }

  private reply(id: string | number | null, code: number, message: string, data?: Record<string, unknown>): void {
    this.options.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } })}\n`);
  }
}
