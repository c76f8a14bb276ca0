/**
 * Every route of the emulator. Each module owns one area of the spec and exports `routes: Route[]`;
 * add a new area by importing its array here.
 */
import type { Route } from '../router.js';
import { routes as authorFromGroupRoutes } from './author-from-group.js';
import { routes as authorsGroupRoutes } from './authors-groups.js';
import { routes as controlRoutes } from './control.js';
import { routes as customFieldRoutes } from './custom-fields.js';
import { routes as journalRoutes } from './journals.js';
import { routes as manuscriptRoutes } from './manuscripts.js';
import { routes as markRoutes } from './mark.js';
import { routes as uiRoutes } from './ui.js';
import { routes as quirkRoutes } from './quirks.js';

export const allRoutes: Route[] = [
  ...authorFromGroupRoutes,
  ...authorsGroupRoutes,
  ...customFieldRoutes,
  ...manuscriptRoutes,
  ...journalRoutes,
  ...markRoutes,
  ...controlRoutes,
  ...uiRoutes,
  ...quirkRoutes,
];
