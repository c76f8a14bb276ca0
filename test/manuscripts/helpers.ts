/** Builders shared by the manuscript tests: an emulator from a tweaked default fixture, and a client. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ManuscriptUploadInput, type ServiceClient } from '../../src/client/index.js';
import { loadFixture, type Fixture, type FixtureOrg } from '../../src/emulator/fixture.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';
import { DEMO_API_KEY } from '../support/cli.js';
import { testClient } from '../support/client.js';

export const API_KEY = DEMO_API_KEY;
/** The emulator's clock: academic ages are relative to 2026. */
export const NOW = Date.UTC(2026, 5, 1);

export function defaultFixture(): Fixture {
  return structuredClone(loadFixture());
}

export async function emulatorWith(tweak: (org: FixtureOrg, fixture: Fixture) => void = () => {}): Promise<RunningEmulator> {
  const fixture = defaultFixture();
  tweak(fixture.orgs[0]!, fixture);
  return startEmulator({ fixture, clock: () => NOW });
}

export function clientFor(emulator: RunningEmulator, apiKey = API_KEY): ServiceClient {
  return testClient(emulator, { apiKey, retry: { maxAttempts: 1 }, rateLimit: { rps: 1000, burst: 100, maxInFlight: 8 } });
}

export function fixtureFile(name: string): Buffer {
  return readFileSync(fileURLToPath(new URL(`../fixtures/manuscripts/${name}`, import.meta.url)));
}

export const CARDIOLOGY: Pick<ManuscriptUploadInput, 'title' | 'abstract'> = {
  title: 'Anticoagulation strategies and catheter ablation outcomes in atrial fibrillation',
  abstract: 'We compare anticoagulation strategies after catheter ablation in atrial fibrillation with heart failure.',
};
export const ONCOLOGY: Pick<ManuscriptUploadInput, 'title' | 'abstract'> = {
  title: 'Tumour microenvironment remodelling and checkpoint inhibitor response in melanoma',
  abstract: 'Circulating tumour DNA and the tumour microenvironment predict immunotherapy response in melanoma.',
};

let counter = 0;
export function manuscript(overrides: Partial<ManuscriptUploadInput> = {}): ManuscriptUploadInput {
  counter += 1;
  return { folder: 'NEURO', originId: `MS-${counter}`, ...CARDIOLOGY, authors: [], ...overrides };
}
