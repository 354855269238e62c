/**
 * A run's webhook events: which a client may subscribe its `webhook_url` to (`webhook_events` at
 * submit, a refvid extension) and the `type` each is sent as. The interface's default is the
 * terminal event alone.
 */
import type { components } from "@refvid/api-types";
import type { AlertType } from "./alerts.js";
import type { TerminalStatus } from "./run-states.js";

/** One of the names `webhook_events` takes: `started`, `progress` or `completed` (the terminal event). */
export type WebhookSubscription = components["schemas"]["WebhookEvents"][number];

/** What a run with a `webhook_url` and no `webhook_events` gets: its terminal event only. */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookSubscription[] = ["completed"];

/** The `type` of a terminal event. */
export type TerminalWebhookEvent = `run.${TerminalStatus}`;
/** A run's events, and the organization's spend alerts (alerts.ts), which belong to no run. */
export type WebhookEventType = TerminalWebhookEvent | "run.started" | "run.progress" | AlertType;

export interface WebhookSubscriber {
  webhookUrl: string | null;
  webhookEvents: readonly WebhookSubscription[];
}

/** Whether the run's webhook gets `event`: it has a URL and subscribed to the event. */
export const webhookGets = (run: WebhookSubscriber, event: WebhookSubscription): boolean =>
  run.webhookUrl !== null && run.webhookEvents.includes(event);
