/**
 * The review artifact as `apply-reviewed` downloads it (a zip of the folder `review` wrote): its
 * manifest, checked to be for the commit that was merged, and the saved plans it names, written to
 * a private folder for `rostersync apply`'s checks. Nothing else in the zip is read, and every
 * entry is bounded in its inflated size (yauzl validates the sizes the zip declares).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import yauzl from 'yauzl';
import type { Entry, ZipFile } from 'yauzl';
import { UserFacingError } from '../errors/user-facing-error.js';
import { writeFileAtomic } from '../report/atomic-file.js';
import { reviewManifestSchema, type ReviewManifest } from './manifest.js';

/** A plan of a million records is ~1 GB of JSON; a roster reviewed in a pull request is far smaller. */
const MAX_ENTRY_BYTES = 512 * 1024 * 1024;

export interface ReviewArtifact {
  manifest: ReviewManifest;
  /** Where the plan the manifest names (`entry.plan`) was written. */
  planPath(name: string): string;
}

export async function readReviewArtifact(zipBytes: Uint8Array, workDir: string, headSha: string): Promise<ReviewArtifact> {
  const entries = await readEntries(zipBytes, (name) => name === 'review.json' || name.endsWith('/plan.json'));
  const manifestText = entries.get('review.json');
  if (manifestText === undefined) throw broken('it holds no review.json');
  let manifest: ReviewManifest;
  try {
    manifest = reviewManifestSchema.parse(JSON.parse(manifestText));
  } catch (error) {
    throw broken(`its review.json is not one rostersync wrote (${(error as Error).message.split('\n')[0]})`);
  }
  if (manifest.headSha !== headSha) throw broken(`it was made for commit ${manifest.headSha}, not ${headSha}`);
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const written = new Map<string, string>();
  for (const [index, pipeline] of manifest.pipelines.entries()) {
    if (pipeline.plan === null) continue;
    const text = entries.get(pipeline.plan);
    if (text === undefined) throw broken(`its review.json names ${pipeline.plan}, which is not in it`);
    // Our own file name, never the zip's: an entry name cannot choose where it is written.
    const path = join(workDir, `plan-${index}.json`);
    await writeFileAtomic(path, text);
    written.set(pipeline.plan, path);
  }
  return {
    manifest,
    planPath(name) {
      const path = written.get(name);
      if (!path) throw broken(`it holds no plan ${name}`);
      return path;
    },
  };
}

function broken(why: string): UserFacingError {
  return new UserFacingError(`the review artifact cannot be applied: ${why}.`, { hint: 'Push to the pull request again (the review job plans again), or re-run its review job, then merge.' });
}

/** The wanted entries' text, by name. */
async function readEntries(bytes: Uint8Array, wanted: (name: string) => boolean): Promise<Map<string, string>> {
  const zip = await new Promise<ZipFile>((resolve, reject) => {
    yauzl.fromBuffer(Buffer.from(bytes), { lazyEntries: true, validateEntrySizes: true }, (error, opened) => (error ? reject(broken(`it is not a zip file (${error.message})`)) : resolve(opened)));
  });
  const out = new Map<string, string>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        if (!wanted(entry.fileName)) return zip.readEntry();
        if (entry.uncompressedSize > MAX_ENTRY_BYTES) return reject(broken(`its ${entry.fileName} is ${entry.uncompressedSize} bytes inflated`));
        zip.openReadStream(entry, (error, stream) => {
          if (error) return reject(broken(error.message));
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', (e: Error) => reject(broken(e.message)));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve());
      zip.on('error', (error: Error) => reject(broken(error.message)));
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return out;
}
