/** `refvid webhooks secret|deliveries|redeliver|listen`. */
import type { components } from "@refvid/api-types";
import { errorFromResponse } from "@refvid/client";
import { type Command, Option } from "commander";
import { positiveInteger } from "../args.js";
import { colorStatus, details, table } from "../format.js";
import { session } from "../session.js";
import { registerListen } from "./listen.js";

type Delivery = components["schemas"]["WebhookDelivery"];

function lastAttempt(delivery: Delivery): string | undefined {
  const attempt = delivery.attempts.at(-1);
  if (!attempt) return undefined;
  return attempt.status === null ? (attempt.error ?? "no answer") : String(attempt.status);
}

interface DeliveryOptions {
  run?: string;
  state?: "pending" | "delivered" | "failed";
  limit: number;
}

export function registerWebhooks(program: Command): void {
  const webhooks = program
    .command("webhooks")
    .summary("the signing secret, the delivery log, and a local listener")
    .description(
      "Webhooks: refvid POSTs a signed run.* event (Standard Webhooks) to a run's webhook_url when it ends.",
    );

  webhooks
    .command("secret")
    .description(
      "Show the signing secret (whsec_…) of the key's environment, to verify deliveries with. " +
        "Live and test keys each have their own: it verifies the webhooks of that environment's runs only.",
    )
    .action(async (_options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const secret = await client().getWebhookSecret();
      if (io.json) return io.printJson(secret);
      io.print(secret.secret);
      io.info(`The ${secret.environment} secret: it signs the webhooks of ${secret.environment} runs only.`);
      if (secret.previous_secret) {
        io.info(
          `The previous secret ${secret.previous_secret} also signs until ${secret.previous_secret_expires_at}.`,
        );
      }
    });

  webhooks
    .command("deliveries")
    .description("The delivery log, newest first: each event and every attempt to deliver it.")
    .option("--run <run_id>", "keep the delivery of this run")
    .addOption(
      new Option("--state <state>", "keep deliveries in this state").choices([
        "pending",
        "delivered",
        "failed",
      ]),
    )
    .option("--limit <n>", "show at most this many", positiveInteger, 20)
    .action(async (options: DeliveryOptions, command: Command) => {
      const { io, client: connect } = await session(command);
      const client = connect();
      const found: Delivery[] = [];
      let cursor: string | undefined;
      do {
        const query = {
          run_id: options.run,
          state: options.state,
          limit: Math.min(options.limit, 100),
          cursor,
        };
        const { data, error, response } = await client.api.GET("/v1/webhooks/deliveries", {
          params: { query },
        });
        if (!response.ok || !data) throw errorFromResponse(response, error);
        found.push(...data.data.slice(0, options.limit - found.length));
        cursor = data.has_more && data.next_cursor ? data.next_cursor : undefined;
      } while (cursor && found.length < options.limit);
      if (io.json) return io.printJson(found);
      if (found.length === 0) return io.print("No deliveries match.");
      const rows = found.map((d) => [
        d.id,
        d.run_id,
        d.event_type,
        colorStatus(io.c, d.state),
        d.attempts.length,
        lastAttempt(d),
        d.next_attempt_at ?? undefined,
      ]);
      io.print(table(io.c, ["DELIVERY", "RUN", "EVENT", "STATE", "ATTEMPTS", "LAST", "NEXT ATTEMPT"], rows));
    });

  webhooks
    .command("redeliver")
    .description("Send a delivery once more, now, with the same webhook-id and body, signed afresh.")
    .argument("<delivery_id>", "the delivery's id (msg_…), from `refvid webhooks deliveries`")
    .action(async (id: string, _options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const { data, error, response } = await client().api.POST(
        "/v1/webhooks/deliveries/{delivery_id}/redeliver",
        {
          params: { path: { delivery_id: id } },
        },
      );
      if (!response.ok || !data) throw errorFromResponse(response, error);
      if (io.json) return io.printJson(data);
      io.print(`Queued another attempt of ${data.id}.`);
      io.print(
        details(io.c, [
          ["run", data.run_id],
          ["event", data.event_type],
          ["url", data.url],
          ["state", colorStatus(io.c, data.state)],
          ["attempts", data.attempts.length],
          ["next attempt", data.next_attempt_at],
        ]),
      );
    });

  registerListen(webhooks);
}
