/** Spec § 8: `GET /api/external/custom-fields/all/` lists the org's custom fields for the three owners. */
import type { Route } from '../router.js';
import { json } from '../reply.js';

export const routes: Route[] = [
  {
    method: 'GET',
    pattern: '/api/external/custom-fields/all/',
    auth: 'api-key',
    handle: ({ org }) => json(org.customFieldsListing),
  },
];
