/**
 * Marking a candidate as referee, as a user does in the service's UI, and the webhook envelope
 * the action produces (docs/service-contract.md, The webhook, `mark_as_proposal_referee`).
 */
import type { Candidate, WebhookCandidate, WebhookEnvelope, WebhookPayload } from '../../client/schemas.js';
import type { ResolvedRefereeFinder } from './candidates.js';
import type { MarkState, StoredManuscript } from './state.js';

/** Payload structure version the emulator sends (the spec gives no value; see docs). */
export const WEBHOOK_PAYLOAD_VERSION = 1;

export interface MarkAction {
  authorId: number;
  marked: boolean;
  userEmail: string;
}

export type MarkOutcome = { ok: true } | { ok: false; status: 404 | 409; code: string; message: string };

/** Applies one click. Score and relevant_concepts are frozen at the very first marking. */
export function applyMark(manuscript: StoredManuscript, marks: Map<number, MarkState>, action: MarkAction): MarkOutcome {
  const candidate = manuscript.ranked.get(action.authorId);
  const existing = marks.get(action.authorId);
  if (action.marked) {
    if (!candidate && !existing) {
      return {
        ok: false,
        status: 404,
        code: 'not_found',
        message: `author ${action.authorId} is not a candidate of manuscript ${manuscript.originId}; upload it without exclude_candidates and pick an author_id from its candidates`,
      };
    }
    if (existing) {
      existing.marked = true;
      existing.markedBy = action.userEmail;
    } else {
      marks.set(action.authorId, {
        marked: true,
        markedBy: action.userEmail,
        frozenScore: candidate!.score,
        frozenConcepts: [...candidate!.relevant_concepts],
        snapshot: candidate!,
      });
    }
    return { ok: true };
  }
  if (!existing?.marked) {
    return { ok: false, status: 409, code: 'not_marked', message: `author ${action.authorId} is not marked as referee of manuscript ${manuscript.originId}` };
  }
  existing.marked = false;
  return { ok: true };
}

function webhookCandidate(source: Candidate, mark: MarkState): WebhookCandidate {
  return {
    name: source.name,
    first_name: source.first_name,
    last_name: source.last_name,
    middle_name: source.middle_name,
    suffix: source.suffix,
    author_id: source.author_id,
    email: source.email,
    orcid: source.orcid,
    affiliation: source.affiliation,
    articlesCount: source.articlesCount,
    citationsCount: source.citationsCount,
    hIndex: source.hIndex,
    score: mark.frozenScore,
    relevant_concepts: mark.frozenConcepts,
    url: source.url,
    authors_groups: source.authors_groups,
    marked: true,
    marked_by: mark.markedBy,
  };
}

/**
 * The payload after an action: the marked candidates only (by author id), and the folder's
 * authors-groups settings when their effect is one the webhook documents (highlight, limit_to).
 */
export function buildPayload(
  manuscript: StoredManuscript,
  marks: ReadonlyMap<number, MarkState>,
  refereeFinder: ResolvedRefereeFinder | null,
): WebhookPayload {
  const candidates = [...marks]
    .filter(([, mark]) => mark.marked)
    .sort((a, b) => a[0] - b[0])
    .map(([authorId, mark]) => webhookCandidate(manuscript.ranked.get(authorId) ?? mark.snapshot, mark));
  const settings =
    refereeFinder && (refereeFinder.effect === 'highlight' || refereeFinder.effect === 'limit_to')
      ? { authors_groups: refereeFinder.groups.map((g) => ({ id: g.id, name: g.name, label: g.label })), effect: refereeFinder.effect }
      : null;
  return {
    version: WEBHOOK_PAYLOAD_VERSION,
    manuscript_id: manuscript.id,
    origin_id: manuscript.originId,
    candidates,
    authors_groups_settings: settings,
  };
}

export function buildEnvelope(input: { order: number; nowMs: number; apiKey: string; payload: WebhookPayload; test?: boolean }): WebhookEnvelope {
  return {
    action: 'mark_as_proposal_referee',
    // "Unix-style numeric time" (docs/service-contract.md, The webhook): whole seconds.
    timestamp: Math.floor(input.nowMs / 1000),
    order: input.order,
    api_key: input.apiKey,
    ...(input.test ? { test: true } : {}),
    payload: input.payload,
  };
}
