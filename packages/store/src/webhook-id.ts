/**
 * Each event's `webhook-id`, the same in every store (Postgres builds the same text in SQL):
 * `msg_` and the run's uuid for its terminal event, the one event of the interface; with
 * `_started`, or `_progress_` and the delivery's sequence number, for the others.
 */
export const webhookIdOf = (runId: string) => `msg_${runId.slice("run_".length)}`;
export const startedWebhookIdOf = (runId: string) => `${webhookIdOf(runId)}_started`;
export const progressWebhookIdOf = (runId: string, seq: number) => `${webhookIdOf(runId)}_progress_${seq}`;
