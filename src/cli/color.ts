/**
 * Whether to write ANSI colours to a stream, by the conventions other tools follow:
 * `FORCE_COLOR` (any value but `0`/`false`) forces them, e.g. in CI logs that render colour;
 * `FORCE_COLOR=0` or a non-empty `NO_COLOR` (no-color.org) turn them off; otherwise a terminal
 * gets colour and a pipe or file does not.
 */
export function useColor(stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !['0', 'false'].includes(force.trim().toLowerCase());
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return (stream as NodeJS.WriteStream).isTTY === true;
}
