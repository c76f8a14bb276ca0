/**
 * The service client of a run: the pipeline's policy sets the ceiling of the request rate (none:
 * the client finds the service's limit) and the calls in flight; `--max-rps` / `--concurrency`
 * override them.
 */
import { createClient, type ClientOptions, type ServiceClient } from '../client/client.js';
import type { PolicyConfig } from '../config/pipeline.js';
import type { RunOptions } from './options.js';

export function clientForPolicy(policy: PolicyConfig, options: Pick<RunOptions, 'service' | 'maxRps' | 'concurrency' | 'logger' | 'client'>): ServiceClient {
  const client: ClientOptions = {
    baseUrl: options.service.baseUrl,
    apiKey: options.service.apiKey,
    rateLimit: { rps: options.maxRps ?? policy.max_rps, maxInFlight: options.concurrency ?? policy.concurrency },
    ...(options.logger ? { logger: options.logger } : {}),
    ...options.client,
  };
  return createClient(client);
}
