// Finding the secrets in a text (SPEC §7): where each is and its kind, never its value in any message. The
// rules are secretlint's recommended set, run through the few calls of its rule API they use (no secretlint
// core: its comment directives must never let a text switch redaction off), and crux's table (secret-rules.ts).
import { kindOfName, NOT_A_VALUE, PATTERN_RULES, SECRETLINT_KEYWORDS, SECRETLINT_KINDS, type SecretKind } from './secret-rules';

export interface SecretSpan {
  readonly start: number;
  readonly end: number;
  readonly kind: SecretKind;
}

interface Message {
  readonly id: string;
  readonly data?: Readonly<Record<string, unknown>>;
}
interface SecretlintRule {
  readonly meta: { readonly id: string };
  create(context: unknown, options: unknown): { file?(source: unknown): void };
}

let preset: readonly SecretlintRule[] | undefined;
/** The rule set, loaded on the first text that is looked at: a read never loads it. */
function secretlintRules(): readonly SecretlintRule[] {
  preset ??= (require('@secretlint/secretlint-rule-preset-recommend') as { rules: SecretlintRule[] }).rules.filter(
    (rule) => rule.meta.id !== '@secretlint/secretlint-rule-filter-comments',
  );
  return preset;
}

// The AWS rule finds access key ids only when asked; its account ids are no secret (SECRETLINT_KINDS has none).
const OPTIONS: Readonly<Record<string, unknown>> = { '@secretlint/secretlint-rule-aws': { enableIDScanRule: true } };

/** Where the secret a rule reported is: the value its message names (a rule's range may cover the whole match). */
function spanOf(text: string, message: Message, range: readonly [number, number]): [number, number] {
  const values = Object.values(message.data ?? {}).filter((v): v is string => typeof v === 'string' && v.length >= 8);
  for (const value of values.sort((a, b) => b.length - a.length)) {
    const at = text.indexOf(value, range[0]);
    if (at >= 0 && at <= range[1]) return [at, at + value.length];
  }
  return [range[0], range[1]];
}

/** Whether secretlint's rules could find anything in `text` (its lower-case form): see SECRETLINT_KEYWORDS. */
export const mayHoldSecretlintSecret = (lower: string): boolean => SECRETLINT_KEYWORDS.some((k) => lower.includes(k));

/** The spans secretlint's rules report, every rule run over the whole text. */
export function secretlintSpans(text: string, spans: SecretSpan[]): void {
  const context = {
    createTranslator: () => (id: string, data?: Record<string, unknown>) => ({ id, data }),
    report: ({ message, range }: { message: Message; range: [number, number] }) => {
      const kind = SECRETLINT_KINDS[message.id];
      if (kind === undefined) return;
      const [start, end] = spanOf(text, message, range);
      if (end > start) spans.push({ start, end, kind });
    },
    ignore: () => {},
  };
  const source = { content: text, contentType: 'text', filePath: undefined, ext: '' };
  for (const rule of secretlintRules()) rule.create(context, OPTIONS[rule.meta.id] ?? {}).file?.(source);
}

const LETTERS_ONLY = /^[A-Za-z_][\w.-]*$/;
const CODE = /[[(]/;
/** Whether a value assigned to a secret's name is one: not a reference, not code, not a plain word. */
function isSecretValue(value: string, kind: SecretKind): boolean {
  if (NOT_A_VALUE.test(value) || CODE.test(value)) return false;
  if (kind === 'password') return !value.includes('.') || /\d/.test(value);
  return value.length >= 8 && !(LETTERS_ONLY.test(value) && !/\d/.test(value));
}

function patternSpans(text: string, lower: string, spans: SecretSpan[]): void {
  for (const rule of PATTERN_RULES) {
    if (!rule.keywords.some((k) => lower.includes(k))) continue;
    for (const m of text.matchAll(rule.pattern)) {
      const value = m.groups!.s!;
      const start = m.index! + m[0].lastIndexOf(value);
      const name = m.groups!.name;
      const kind = name === undefined ? rule.kind : kindOfName(name);
      if (name !== undefined && !isSecretValue(value, kind)) continue;
      spans.push({ start, end: start + value.length, kind });
    }
  }
}

/** Every secret in `text`, in order, none overlapping (of two that overlap, the one that starts first, or the longer). */
export function findSecrets(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  const lower = text.toLowerCase();
  if (mayHoldSecretlintSecret(lower)) secretlintSpans(text, spans);
  patternSpans(text, lower, spans);
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: SecretSpan[] = [];
  for (const span of spans) if (kept.length === 0 || span.start >= kept[kept.length - 1]!.end) kept.push(span);
  return kept;
}

/** `text` with every secret replaced by `[redacted:KIND]`, the text around it kept byte for byte. */
export function redactSecrets(text: string): string {
  const spans = findSecrets(text);
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += `${text.slice(at, span.start)}[redacted:${span.kind}]`;
    at = span.end;
  }
  return out + text.slice(at);
}
