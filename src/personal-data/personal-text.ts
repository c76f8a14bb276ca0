/**
 * A roster value quoted inside a sentence (a name in a guard's example, a word of an encoding's
 * evidence, a label the service lacks) is marked as personal where the sentence is built, so that
 * `--mask` and the alerts can take it out wherever the sentence goes (report/mask.ts `maskText`),
 * without knowing every message by heart. The mark is a pair of Unicode isolates (FIRST STRONG
 * ISOLATE … POP DIRECTIONAL ISOLATE): invisible, and what Unicode asks for around text of unknown
 * direction anyway, so an Arabic or Hebrew name does not reorder the sentence around it.
 */
const OPEN = '\u2068';
const CLOSE = '\u2069';
/** Every isolate mark: a value that brings its own could end the span early. */
const ISOLATES = /[\u2066-\u2069]/g;

export function personal(value: string): string {
  return `${OPEN}${value.replace(ISOLATES, '')}${CLOSE}`;
}

/** Every personal span of `text`, replaced. */
export function replacePersonal(text: string, replacement: string): string {
  return text.replace(/\u2068[^\u2069]*\u2069/g, replacement);
}

/** `text` without the marks, as a person reads it. */
export function unmarked(text: string): string {
  return text.replace(/[\u2068\u2069]/g, '');
}
