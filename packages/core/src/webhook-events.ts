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

/**
 * The `type` of a terminal event: a run's end, or, for a video of the `/v1/videos` surface, the
 * OpenAI-compatible `video.completed` (succeeded) or `video.failed` (any other end).
 */
export type TerminalWebhookEvent = `run.${TerminalStatus}` | VideoWebhookEvent;
export type VideoWebhookEvent = "video.completed" | "video.failed";

/** The terminal event a run's end is sent as. */
export const terminalEvent = (status: TerminalStatus, video: boolean): TerminalWebhookEvent =>
  video ? (status === "succeeded" ? "video.completed" : "video.failed") : `run.${status}`;
/** A run's events, and the organization's spend alerts (alerts.ts), which belong to no run. */
export type WebhookEventType = TerminalWebhookEvent | "run.started" | "run.progress" | AlertType;

export interface WebhookSubscriber {
  webhookUrl: string | null;
  webhookEvents: readonly WebhookSubscription[];
  /** Present on a video of the `/v1/videos` surface: its end is a `video.*` event. */
  video?: unknown;
}

/** Whether the run's webhook gets `event`: it has a URL and subscribed to the event. */
export const webhookGets = (run: WebhookSubscriber, event: WebhookSubscription): boolean =>
  run.webhookUrl !== null && run.webhookEvents.includes(event);
