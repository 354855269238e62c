/**
 * An organization's weight in the queue's fair share, changed in place: `PATCH
 * /admin/v1/organizations/{organization_id}` with `queue_weight`.
 */
import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type FormEvent, useState } from "react";
import { unwrap } from "./admin.js";
import { ErrorMessage } from "./errors.js";

type Organization = components["schemas"]["Organization"];

export function QueueWeight({
  client,
  org,
  onChange,
}: {
  client: RefvidClient;
  org: Organization;
  onChange: () => void;
}) {
  const [weight, setWeight] = useState(String(org.queue_weight));
  const [error, setError] = useState<unknown>();
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      await unwrap(
        client.api.PATCH("/admin/v1/organizations/{organization_id}", {
          params: { path: { organization_id: org.organization_id } },
          body: { queue_weight: Number(weight) },
        }),
      );
      onChange();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <form onSubmit={save} aria-label="Queue weight" className="inline-form">
      <div className="field">
        <label htmlFor={`weight-${org.organization_id}`}>Queue weight</label>
        <input
          id={`weight-${org.organization_id}`}
          type="number"
          required
          min={1}
          max={1000}
          step={1}
          value={weight}
          onChange={(e) => setWeight(e.target.value)}
          aria-describedby={`weight-${org.organization_id}-help`}
        />
        <small id={`weight-${org.organization_id}-help`}>
          Its share of the queue when runs wait: 2 gets twice the runs of 1 (now {org.queue_weight}).
        </small>
      </div>
      <button type="submit" disabled={weight === String(org.queue_weight)}>
        Set weight
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}
