/**
 * An API key's spend budget in its row of the operator's keys table: where the key stands (spent
 * and held against the amount, when it resets), edited in place (an amount and a period) through
 * `PATCH /admin/v1/api-keys/{api_key_id}`, or removed (`budget: null`) once the operator confirms.
 */
import type { components } from "@refvid/api-types";
import { type FormEvent, useState } from "react";
import { unwrap } from "./admin.js";
import { BudgetMeter, PER_PERIOD } from "./budget-meter.js";
import { ConfirmCell } from "./confirm-cell.js";
import { ErrorMessage, FieldError, fieldProblems } from "./errors.js";
import type { KeyCellProps } from "./key-caps.js";
import { amountOf, usd } from "./money.js";

type KeyBudget = components["schemas"]["KeyBudget"];
type Period = KeyBudget["period"];
const PERIODS: readonly Period[] = ["day", "week", "month"];

type Mode = { kind: "view" } | { kind: "edit"; amount: string; period: Period } | { kind: "remove" };

export function KeyBudgetCell({ client, apiKey, onSaved }: KeyCellProps) {
  const [mode, setMode] = useState<Mode>({ kind: "view" });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const { budget, key_prefix: prefix } = apiKey;
  const id = `budget-${apiKey.api_key_id}`;

  const send = async (next: KeyBudget | null) => {
    setError(undefined);
    setBusy(true);
    try {
      await unwrap(
        client.api.PATCH("/admin/v1/api-keys/{api_key_id}", {
          params: { path: { api_key_id: apiKey.api_key_id } },
          body: { budget: next },
        }),
      );
      await onSaved();
      setMode({ kind: "view" });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (mode.kind !== "edit") return;
    const amount = amountOf(mode.amount);
    if (!amount) {
      setError(new Error("Enter a budget in USD above 0, with at most 6 decimals, such as 50 or 12.50."));
      return;
    }
    void send({ amount_usd: amount, period: mode.period });
  };

  if (mode.kind === "remove" && budget) {
    return (
      <ConfirmCell
        label="Budget"
        id={`${id}-remove`}
        question={
          <>
            Remove the budget of <code>{prefix}…</code> ({usd(budget.amount_usd)} {PER_PERIOD[budget.period]}
            )? Its runs are then held back by the wallet only.
          </>
        }
        yes="Yes, remove the budget"
        busy={busy}
        onYes={() => void send(null)}
        onKeep={() => setMode({ kind: "view" })}
      >
        <ErrorMessage error={error} />
      </ConfirmCell>
    );
  }
  if (mode.kind === "edit") {
    const { byField, rest } = fieldProblems(error, ["budget.amount_usd", "budget.period"]);
    const problem = byField["budget.amount_usd"];
    return (
      <td data-label="Budget" className="budget-cell">
        <form id={id} onSubmit={save} aria-label={`Budget of ${prefix}`} className="row-form">
          <input
            inputMode="decimal"
            required
            aria-label={`Budget in USD of ${prefix}`}
            placeholder="USD"
            value={mode.amount}
            onChange={(e) => setMode({ ...mode, amount: e.target.value })}
            aria-invalid={problem ? true : undefined}
            aria-describedby={problem ? `${id}-error` : undefined}
          />
          <select
            aria-label={`Budget period of ${prefix}`}
            value={mode.period}
            onChange={(e) => setMode({ ...mode, period: e.target.value as Period })}
          >
            {PERIODS.map((p) => (
              <option key={p} value={p}>
                {PER_PERIOD[p]}
              </option>
            ))}
          </select>
          <button type="submit" disabled={busy}>
            Save budget
          </button>
          <button type="button" className="link" onClick={() => setMode({ kind: "view" })}>
            Cancel
          </button>
        </form>
        <FieldError id={`${id}-error`} problem={problem} />
        {rest ? <ErrorMessage error={error} /> : null}
      </td>
    );
  }
  const edit = () => {
    setError(undefined);
    setMode({ kind: "edit", amount: budget?.amount_usd ?? "", period: budget?.period ?? "month" });
  };
  return (
    <td data-label="Budget" className="budget-cell">
      {budget ? (
        <BudgetMeter budget={budget} label={`Budget of ${prefix}`} />
      ) : (
        <span className="muted">none</span>
      )}
      {apiKey.revoked_at ? null : (
        <div className="row-buttons">
          <button
            type="button"
            className="link"
            onClick={edit}
            aria-label={`${budget ? "Edit budget" : "Set a budget"} of ${prefix}`}
          >
            {budget ? "Edit budget" : "Set a budget"}
          </button>
          {budget ? (
            <button
              type="button"
              className="link"
              onClick={() => {
                setError(undefined);
                setMode({ kind: "remove" });
              }}
              aria-label={`Remove budget of ${prefix}`}
            >
              Remove
            </button>
          ) : null}
        </div>
      )}
    </td>
  );
}
