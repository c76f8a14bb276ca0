/** docs/service-contract.md, call 8: `GET /api/external/custom-fields/all/` lists the org's custom fields for the three owners. */
import { servedAt, type Route } from '../router.js';
import { json } from '../reply.js';
import { quirksOf, UNKNOWN_KIND_FIELD } from '../quirks.js';
import { ENDPOINTS } from '../../client/endpoints.js';

export const routes: Route[] = [
  {
    ...servedAt(ENDPOINTS.listCustomFields),
    auth: 'api-key',
    handle({ org, runtime }) {
      if (!quirksOf(runtime).unknownKindField) return json(org.customFieldsListing);
      const listing = org.customFieldsListing;
      return json({ ...listing, author_from_group: [...listing.author_from_group, UNKNOWN_KIND_FIELD] });
    },
  },
];
