/**
 * An API key's caps in its row of the keys table (runs in flight, requests a minute, the priority
 * of its runs in its organization's queue), edited in
 * place: the inputs sit in their cells and belong, through their `form` attribute, to the form
 * in the last cell, whose Save sends `PATCH /admin/v1/api-keys/{api_key_id}`.
 */
import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type FormEvent, useState } from "react";
import { unwrap } from "./admin.js";
import { ErrorMessage, FieldError, fieldProblems } from "./errors.js";

type ApiKey = components["schemas"]["ApiKey"];

const CAPS = [
  { name: "max_concurrency", label: "Max concurrency", column: "Max in flight", max: 1000 },
  { name: "rate_limit_per_minute", label: "Rate limit per minute", column: "Requests / min", max: 100_000 },
] as const;
type Cap = (typeof CAPS)[number]["name"];
type Values = Record<Cap, string> & { priority: ApiKey["priority"] };
const PRIORITIES: ApiKey["priority"][] = ["low", "normal", "high"];

/** What a key's cells that edit it in place are given: the key, and what to do once it is saved. */
export interface KeyCellProps {
  client: RefvidClient;
  apiKey: ApiKey;
  onSaved: () => Promise<void>;
}

export function KeyCapsCells({ client, apiKey, onSaved }: KeyCellProps) {
  const [values, setValues] = useState<Values | null>(null);
  const [error, setError] = useState<unknown>();
  const formId = `caps-${apiKey.api_key_id}`;
  const label = (text: string) => `${text} of ${apiKey.key_prefix}`;

  const edit = () => {
    setError(undefined);
    setValues({
      max_concurrency: String(apiKey.max_concurrency),
      rate_limit_per_minute: String(apiKey.rate_limit_per_minute),
      priority: apiKey.priority,
    });
  };
  const save = async (event: FormEvent) => {
    event.preventDefault();
    if (!values) return;
    setError(undefined);
    try {
      await unwrap(
        client.api.PATCH("/admin/v1/api-keys/{api_key_id}", {
          params: { path: { api_key_id: apiKey.api_key_id } },
          body: {
            max_concurrency: Number(values.max_concurrency),
            rate_limit_per_minute: Number(values.rate_limit_per_minute),
            priority: values.priority,
          },
        }),
      );
      await onSaved();
      setValues(null);
    } catch (e) {
      setError(e);
    }
  };

  if (!values) {
    return (
      <>
        <td data-label={CAPS[0].column}>{apiKey.max_concurrency}</td>
        <td data-label={CAPS[1].column}>{apiKey.rate_limit_per_minute}</td>
        <td data-label="Caps">
          <span title="Orders the organization's own queued runs">{apiKey.priority} priority</span>{" "}
          {apiKey.revoked_at ? null : (
            <button type="button" className="link" onClick={edit} aria-label={label("Edit caps")}>
              Edit caps
            </button>
          )}
        </td>
      </>
    );
  }
  const { byField, rest } = fieldProblems(error, ["max_concurrency", "rate_limit_per_minute"]);
  return (
    <>
      {CAPS.map((cap) => {
        const id = `${formId}-${cap.name}`;
        return (
          <td key={cap.name} className="cap" data-label={cap.column}>
            <input
              id={id}
              form={formId}
              type="number"
              required
              min={1}
              max={cap.max}
              step={1}
              aria-label={label(cap.label)}
              value={values[cap.name]}
              onChange={(e) => setValues({ ...values, [cap.name]: e.target.value })}
              aria-invalid={byField[cap.name] ? true : undefined}
              aria-describedby={byField[cap.name] ? `${id}-error` : undefined}
            />
            <FieldError id={`${id}-error`} problem={byField[cap.name]} />
          </td>
        );
      })}
      <td data-label="Caps">
        <form id={formId} onSubmit={save} aria-label={label("Caps")} className="row-form">
          <select
            aria-label={label("Priority")}
            value={values.priority}
            onChange={(e) => setValues({ ...values, priority: e.target.value as ApiKey["priority"] })}
          >
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
          <button type="submit">Save</button>
          <button type="button" className="link" onClick={() => setValues(null)}>
            Cancel
          </button>
        </form>
        {rest ? <ErrorMessage error={error} /> : null}
      </td>
    </>
  );
}
