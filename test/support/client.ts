/**
 * A service client for tests: the demo key, a generous pace and short backoffs, so a test waits
 * on the behaviour it checks rather than on production pacing. Any option can be overridden.
 */
import { createClient, type ClientOptions, type ServiceClient } from '../../src/client/client.js';
import { DEMO_API_KEY } from './cli.js';

export function testClient(server: { url: string }, options: Partial<ClientOptions> = {}): ServiceClient {
  return createClient({ baseUrl: server.url, apiKey: DEMO_API_KEY, rateLimit: { rps: 1000, burst: 100 }, retry: { baseDelayMs: 1 }, ...options });
}
