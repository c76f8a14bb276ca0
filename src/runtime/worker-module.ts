/**
 * Starts a worker thread on a module that sits beside the caller. Compiled, the worker is the .js
 * file. Run from the TypeScript sources (tsx, vitest), a worker does not inherit the loader, so it
 * registers tsx before importing the .ts file.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `callerUrl`: the caller's import.meta.url; `name`: the module's file name without extension. */
export function startModuleWorker(callerUrl: string, name: string, options: WorkerOptions): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const tsx = pathToFileURL(createRequire(callerUrl).resolve('tsx/esm/api')).href.replace(/index\.cjs$/, 'index.mjs');
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`, { ...options, eval: true });
}
