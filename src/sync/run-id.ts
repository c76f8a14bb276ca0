/** Run ids sort by time and stay unique across hosts: `20261123T031500Z-4f2a`. */
export function newRunId(now: number, random: () => number = Math.random): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const suffix = Math.floor(random() * 0x10000).toString(16).padStart(4, '0');
  return `${stamp}-${suffix}`;
}
