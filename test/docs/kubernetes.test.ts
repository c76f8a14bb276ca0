/**
 * The Kubernetes recipes of docs/operating-nightly.md cannot run here (no cluster), so their manifests are checked
 * against what the pipeline they run refers to: every file the pipeline names (itself, its mapping,
 * its roster), resolved from the image's working directory as the CLI resolves it, must sit directly
 * in a mounted ConfigMap (ConfigMaps are flat: `../mappings` must be a mount of its own), filled by
 * the page's `kubectl create configmap` from that project folder; and the page must cover the first
 * run (the CronJob suspended, a run with --create-group, then the group id pinned).
 */
import { readFileSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { docBlocks } from './doc-blocks.js';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGE = 'docs/operating-nightly.md';
const page = readFileSync(resolve(ROOT, PAGE), 'utf8');
const blocks = docBlocks(page, PAGE);
const workdir = [...readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8').matchAll(/^WORKDIR\s+(\S+)/gm)].at(-1)![1]!;

interface Pod {
  containers: { args: string[]; volumeMounts: { name: string; mountPath: string }[] }[];
  volumes: { name: string; configMap?: { name: string } }[];
}

const cronJobs = blocks
  .filter((block) => block.lang === 'yaml' && /^kind: CronJob$/m.test(block.text))
  .map((block) => ({ line: block.line, manifest: parse(block.text) as { spec: { suspend?: boolean; jobTemplate: { spec: { template: { spec: Pod } } } } } }));

/** `kubectl create configmap NAME --from-file=SOURCE` of the page: NAME -> SOURCE. */
const configMapSources = new Map(
  [...page.matchAll(/kubectl create configmap (\S+) --from-file=(\S+)/g)].map((match) => [match[1]!, match[2]!.replace(/\/$/, '')] as const),
);

/** The project files a pipeline refers to, relative to the project root. */
function filesOf(pipelineFile: string): string[] {
  const config = parse(readFileSync(resolve(ROOT, pipelineFile), 'utf8')) as { source: { file: string }; mapping: string };
  const dir = posix.dirname(pipelineFile);
  return [pipelineFile, posix.join(dir, config.mapping), posix.join(dir, config.source.file)];
}

describe('the Kubernetes recipes of docs/operating-nightly.md', () => {
  it('are found', () => expect(cronJobs.length).toBeGreaterThanOrEqual(2));

  it.each(cronJobs.map((job) => [job.line, job] as const))(`${PAGE}:%s mounts every file its pipeline refers to`, (_line, { manifest }) => {
    const pod = manifest.spec.jobTemplate.spec.template.spec;
    const container = pod.containers[0]!;
    const pipelineFile = container.args[1]!;
    for (const file of filesOf(pipelineFile)) {
      const inContainer = posix.join(workdir, file);
      const mount = container.volumeMounts.find((entry) => entry.mountPath === posix.dirname(inContainer));
      expect(mount, `${file}: no volume mounted at ${posix.dirname(inContainer)}`).toBeDefined();
      const configMap = pod.volumes.find((volume) => volume.name === mount!.name)?.configMap?.name;
      expect(configMap, `${file}: the volume at ${mount!.mountPath} is not a ConfigMap`).toBeDefined();
      const source = configMapSources.get(configMap!);
      expect([posix.dirname(file), file], `${file}: ConfigMap ${configMap} is created from ${source}`).toContain(source);
    }
  });

  it('covers the first run: suspended until a run with --create-group, then the group id pinned', () => {
    for (const { line, manifest } of cronJobs) expect(manifest.spec.suspend, `${PAGE}:${line}`).toBe(true);
    const kubernetes = page.slice(page.indexOf('## Kubernetes CronJob'), page.indexOf('## GitHub Actions'));
    expect(kubernetes).toMatch(/--create-group/);
    expect(kubernetes).toMatch(/group_id: N/);
    expect(kubernetes).toMatch(/"suspend":false/);
  });
});
