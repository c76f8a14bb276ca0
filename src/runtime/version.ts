/**
 * rostersync's own version, from package.json (beside src/ in a checkout, beside dist/ when
 * installed). It is part of the plan's fast-path key: a new version may map rows differently.
 */
import { readFileSync } from 'node:fs';

export const ROSTERSYNC_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
