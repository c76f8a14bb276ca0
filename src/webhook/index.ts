/** The webhook side of rostersync: a receiver for `mark_as_proposal_referee` and its store. */
export { startWebhookReceiver, secretsEqual, DEFAULT_MAX_WEBHOOK_BODY } from './receiver.js';
export type { WebhookReceiverOptions, RunningWebhookReceiver, ReceiverEvent } from './receiver.js';
export { RefereeStore, readStoreFile, listSelections, STORE_VERSION } from './store.js';
export type { StoreFile, StoredSelection, ApplyResult } from './store.js';
export { openSelectionStore, SqliteSelectionStore, PgSelectionStore, DEFAULT_SELECTION_STORE, LEGACY_JSON_STORE } from './selection-store.js';
export type { SelectionStore } from './selection-store.js';
export { sendTestWebhook, testEnvelope } from './send-test.js';
export type { SendTestOptions, SendTestResult } from './send-test.js';
