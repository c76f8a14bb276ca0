/**
 * Pipeline files (`pipelines/*.yaml`): which roster to read, how to map it, which group it feeds
 * and the sync policy. One zod schema gives the type, the validation (unknown keys are errors
 * naming their path) and `pipelines/schema.json`.
 */
import { z } from 'zod';
import { sourceSchema } from '../sources/options.js';

export const groupSpecSchema = z.strictObject({
  name: z.string().min(1),
  owner_team: z.string().min(1),
  editor_teams: z.array(z.string().min(1)).default([]),
  viewer_teams: z.array(z.string().min(1)).default([]),
});
export type GroupSpec = z.infer<typeof groupSpecSchema>;

/**
 * Two pipelines may write to one group only when both declare the sharing, each with its own
 * client_id prefixes, disjoint from the other's. Rows outside the prefixes are not written.
 */
export const shareSchema = z.strictObject({
  client_id_prefixes: z.array(z.string().min(1)).min(1),
});

/**
 * Either an existing group id, or a group to create once (on an explicit first run,
 * `--create-group`) and remember in the state store.
 */
export const targetSchema = z.union([
  z.strictObject({ group_id: z.number().int().positive(), share: shareSchema.optional() }),
  z.strictObject({ group: groupSpecSchema, share: shareSchema.optional() }),
]);
export type TargetConfig = z.infer<typeof targetSchema>;

export const guardsSchema = z.strictObject({
  /** Refuse a run that would delete more than this many records... */
  max_deletes: z.number().int().min(0).default(50),
  /** ...or more than this percentage of the owned records, whichever is lower. */
  max_delete_percent: z.number().min(0).max(100).default(10),
  /** Refuse a run whose valid-record count dropped by more than this percentage since the last successful run. */
  max_source_drop_percent: z.number().min(0).max(100).default(50),
  /**
   * Refuse a run that turns more owned records into other people (name changed, no email or ORCID
   * kept) than this many...
   */
  max_identity_changes: z.number().int().min(0).default(10),
  /** ...or this percentage of the owned records, whichever is lower (never below one). */
  max_identity_change_percent: z.number().min(0).max(100).default(5),
});

/**
 * Retention of report folders, which hold roster names and emails: `30` keeps the
 * reports of the last 30 runs, `"90d"` those of the last 90 days, `"all"` every one. The newest
 * run's report is always kept; the run-history index keeps a line for pruned runs.
 */
export const reportsPolicySchema = z.strictObject({
  keep: z
    .union([z.number().int().min(1), z.string().regex(/^([1-9][0-9]*d|all)$/, 'a number of runs (30), of days ("90d"), or "all"')])
    .default(30),
});

/**
 * Rejected rows a nightly run tolerates: within both ceilings the run still lists every rejected
 * row (report, rejected.csv) but exits 0 with the outcome `warning` ("done, 3 rows rejected");
 * over either it exits 2 as without the key. A ceiling left out does not limit.
 */
export const rejectsPolicySchema = z
  .strictObject({
    /** Tolerate at most this many rejected rows... */
    max_count: z.number().int().min(0).optional(),
    /** ...and at most this percentage of the rows read (filtered rows not counted). */
    max_percent: z.number().min(0).max(100).optional(),
  })
  .refine((value) => value.max_count !== undefined || value.max_percent !== undefined, 'give max_count, max_percent or both');
export type RejectsPolicy = z.infer<typeof rejectsPolicySchema>;

export const policySchema = z.strictObject({
  /** `mirror` deletes owned records gone from the roster; `upsert` lists them as orphans. */
  mode: z.enum(['upsert', 'mirror']).default('upsert'),
  /** `partial` sends only changed managed fields; `full` replaces whole records (roster owns every field). */
  update: z.enum(['partial', 'full']).default('partial'),
  /**
   * Ceiling of requests per second sent to the service, never exceeded. Without it the client
   * finds the service's limit itself: it starts at 4 per second, doubles while work waits, and
   * settles just under the limit at the first 429s (src/rate-limit/rate-limiter.ts).
   */
  max_rps: z.number().positive().optional(),
  /** Accepted so older pipeline files stay valid, and ignored: requests are paced evenly, as bursts break window limits. */
  burst: z.number().int().positive().optional(),
  /** Requests in flight at once. */
  concurrency: z.number().int().positive().default(4),
  guards: guardsSchema.default({ max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50, max_identity_changes: 10, max_identity_change_percent: 5 }),
  reports: reportsPolicySchema.default({ keep: 30 }),
  /**
   * Rows of different client_ids that are probably one person (same ORCID iD, same email, or the
   * same affiliation with the same or a very similar name; src/mapping/duplicate-people.ts):
   * `warn` lists the pairs in the report; `reject` also holds back the new client_id(s) of each
   * pair (neither created nor deleted) until the rows are merged.
   */
  duplicate_people: z.enum(['warn', 'reject']).default('warn'),
  /**
   * Owned records read back from the service on each real sync, at random among those the plan
   * takes as unchanged (src/sync/drift.ts): one GET each. 0 turns the drift check off.
   */
  drift_sample: z.number().int().min(0).max(1000).default(5),
  /**
   * Every owned record is read back once within this many real syncs: besides the random sample,
   * each run reads the next ceil(owned / drift_cycle) records in client_id order (src/sync/drift-window.ts),
   * one GET each (34 for 1,000 owned records at 30, 1,667 for 50,000). 0 turns the rotating window off.
   */
  drift_cycle: z.number().int().min(0).max(1_000_000).default(30),
  /**
   * What `rostersync revert` can rely on (docs/migrating.md, "Undo a run"). `exact`: every record
   * is read before it is updated or deleted (one GET more per update and per delete, counted by
   * the estimate), so a revert writes back exactly what the service held, fields no mapping
   * manages included, and judges every field for edits since. `last_applied` (the default):
   * no extra call; an update is undone with the values the pipeline last applied, when the run's
   * plan knows of no drift, and a deleted record comes back with its managed fields only.
   */
  undo: z.enum(['last_applied', 'exact']).optional(),
  /** Rejected rows tolerated with exit 0 (outcome `warning`); without it any rejected row exits 2. */
  rejects: rejectsPolicySchema.optional(),
});
export type PolicyConfig = z.infer<typeof policySchema>;

/** The name of an environment variable: secrets are read from the environment, never from the pipeline file. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable');

export const NOTIFY_EVENTS = ['failure', 'refused', 'rejects', 'drift', 'success'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/**
 * Alerts after a real sync (never after a dry run or a plan), src/notify/. A notification that
 * cannot be delivered is retried briefly, logged and noted in the report; it never changes the
 * run's outcome or exit code.
 */
export const notifySchema = z
  .strictObject({
    /**
     * Which runs notify: `failure` (the run failed, stopped, or records failed), `refused` (a guard),
     * `rejects` (rejected rows over policy.rejects), `drift` (the drift check found records changed
     * or deleted in the service), `success` (a finished run, rejects within tolerance included).
     */
    on: z.array(z.enum(NOTIFY_EVENTS)).min(1).default(['failure', 'refused']),
    /** A link to the report in messages: `{pipeline}` and `{run_id}` are replaced; else the report's local path. */
    report_url: z.string().url().optional(),
    webhook: z
      .strictObject({
        /** Environment variable holding the URL (Slack and Teams URLs carry their secret). */
        url_env: envName,
        /** Environment variable holding the HMAC secret: the body's HMAC-SHA256 goes in `X-Rostersync-Signature-256`. */
        secret_env: envName.optional(),
        /** `json` (rostersync's own), `slack` (incoming webhook) or `teams` (Workflows, an Adaptive Card). */
        format: z.enum(['json', 'slack', 'teams']).default('json'),
      })
      .optional(),
    email: z
      .strictObject({
        smtp: z.strictObject({
          host: z.string().min(1),
          /** 587 (STARTTLS) by default; 465 with `secure: true`. */
          port: z.number().int().min(1).max(65535).optional(),
          /** TLS from the first byte (port 465); otherwise STARTTLS, which the server must offer (src/notify/email.ts). */
          secure: z.boolean().default(false),
          /**
           * Send without TLS when the server offers none: only for a relay you trust the network to
           * (the password and the message then cross it in clear). Without it, a server off loopback,
           * or any server asked for a login, must offer STARTTLS.
           */
          allow_plaintext: z.boolean().default(false),
          user: z.string().min(1).optional(),
          /** Environment variable holding the SMTP password. */
          password_env: envName.optional(),
        }),
        from: z.string().min(3),
        to: z.array(z.string().min(3)).min(1),
      })
      .optional(),
  })
  .refine((value) => value.webhook !== undefined || value.email !== undefined, 'give a webhook, an email, or both');
export type NotifyConfig = z.infer<typeof notifySchema>;

export const pipelineSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal(1).default(1),
  /** Names the state database and reports; defaults to the file name without extension. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, dot, dash and underscore only')
    .optional(),
  source: sourceSchema,
  /** Mapping file, relative to the pipeline file. */
  mapping: z.string().min(1),
  target: targetSchema,
  policy: policySchema.default({
    mode: 'upsert',
    update: 'partial',
    concurrency: 4,
    guards: { max_deletes: 50, max_delete_percent: 10, max_source_drop_percent: 50, max_identity_changes: 10, max_identity_change_percent: 5 },
    reports: { keep: 30 },
    duplicate_people: 'warn',
    drift_sample: 5,
    drift_cycle: 30,
  }),
  /** Alerts: on which outcomes, to a webhook and/or by email (src/notify/). */
  notify: notifySchema.optional(),
  /** State directory, relative to the pipeline file's directory (default `.rostersync`). */
  state_dir: z.string().optional(),
  /**
   * A shared PostgreSQL state database (`postgres://user@host:5432/db`) instead of SQLite in
   * state_dir; ROSTERSYNC_STATE_URL overrides it. No password here: PGPASSWORD or a password file.
   */
  state: z.string().optional(),
  /** Report directory, relative to the pipeline file's directory (default `reports`); each run writes `<dir>/<pipeline>/<run id>/`. */
  report_dir: z.string().optional(),
  /**
   * Metrics for Prometheus (node_exporter's textfile collector): `file`, relative to the pipeline
   * file's directory, is replaced at the end of every real run (src/metrics/; `--metrics-file` overrides).
   */
  metrics: z.strictObject({ file: z.string().min(1) }).optional(),
});
export type PipelineFile = z.infer<typeof pipelineSchema>;
