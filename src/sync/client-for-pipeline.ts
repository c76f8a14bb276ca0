/**
 * The service client of a run: the pipeline's policy sets the ceiling of the request rate (none:
 * the client finds the service's limit) and the calls in flight; `--max-rps` / `--concurrency`
 * override them.
 */
import { createClient, type ClientOptions, type ServiceClient } from '../client/client.js';
import type { PolicyConfig } from '../config/pipeline.js';
import { sharedLimiter } from '../rate-limit/shared-budget.js';
import { budgetSessionOf } from '../state/shared-database.js';
import type { RunOptions } from './options.js';

export function clientForPipeline(
  pipeline: { file: string; config: { policy: PolicyConfig; state?: string | undefined } },
  options: Pick<RunOptions, 'service' | 'maxRps' | 'concurrency' | 'logger' | 'client' | 'env'>,
): ServiceClient {
  const policy = pipeline.config.policy;
  const rateLimit = { rps: options.maxRps ?? policy.max_rps, maxInFlight: options.concurrency ?? policy.concurrency };
  // Other runs on the same key share one budget with this run (docs/scaling.md): through the
  // pipeline's PostgreSQL state when it has one, else on this host; unless the caller brings its
  // own limiter or clock.
  const injected = options.client?.limiter ?? options.client?.now ?? options.client?.sleep;
  const limiter = injected
    ? undefined
    : sharedLimiter({
        baseUrl: options.service.baseUrl,
        apiKey: options.service.apiKey,
        env: options.env ?? process.env,
        rateLimit,
        stateDatabase: budgetSessionOf(pipeline, options.env ?? process.env),
        onAlone: (reason) => options.logger?.warn(reason),
      });
  const client: ClientOptions = {
    baseUrl: options.service.baseUrl,
    apiKey: options.service.apiKey,
    rateLimit,
    ...(limiter ? { limiter } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...options.client,
  };
  return createClient(client);
}
