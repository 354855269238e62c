/**
 * An organization's top-ups: the form, then a confirm step that shows the amount and the balance
 * before and after it (the balance read afresh), and the list. Nothing is added until the
 * operator confirms; changing the amount or the note goes back to the form.
 */
import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type ChangeEvent, type FormEvent, useCallback, useEffect, useRef, useState } from "react";
import { date, unwrap, useLoaded } from "./admin.js";
import { ErrorMessage } from "./errors.js";
import { addUsd, amountOf, usd } from "./money.js";

type Organization = components["schemas"]["Organization"];

interface Pending {
  amount: string;
  note: string;
  before: string;
  after: string;
}

export function TopUps(props: { client: RefvidClient; org: Organization; onChange: () => void }) {
  const { client, org, onChange } = props;
  const [amount, setAmount] = useState("");
  const [note, setNote] = useState("");
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const confirmBox = useRef<HTMLElement>(null);
  const path = { organization_id: org.organization_id };

  const { data: topUps = [], reload: load } = useLoaded(
    useCallback(async () => {
      const params = { path: { organization_id: org.organization_id } };
      return (await unwrap(client.api.GET("/admin/v1/organizations/{organization_id}/top-ups", { params })))
        .data;
    }, [client, org.organization_id]),
    setError,
  );
  /** An edit of the form, which takes back a question already asked. */
  const edit = (set: (value: string) => void) => (event: ChangeEvent<HTMLInputElement>) => {
    set(event.target.value);
    setPending(null);
  };
  useEffect(() => {
    if (pending) confirmBox.current?.focus();
  }, [pending]);

  /** The form's answer: the confirm step, with the balance as the server has it now. */
  const review = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    const add = amountOf(amount);
    if (!add) {
      setError(new Error("Enter an amount of USD above 0, with at most 6 decimals, such as 25 or 25.50."));
      return;
    }
    try {
      const { wallet } = await unwrap(
        client.api.GET("/admin/v1/organizations/{organization_id}", { params: { path } }),
      );
      const after = addUsd(wallet.balance_usd, add) ?? "?";
      setPending({ amount: add, note: note.trim(), before: wallet.balance_usd, after });
    } catch (e) {
      setError(e);
    }
  };
  const apply = async (topUp: Pending) => {
    setBusy(true);
    setError(undefined);
    try {
      const body = { amount_usd: topUp.amount, ...(topUp.note ? { note: topUp.note } : {}) };
      await unwrap(
        client.api.POST("/admin/v1/organizations/{organization_id}/top-ups", { params: { path }, body }),
      );
      setPending(null);
      setAmount("");
      setNote("");
      await load();
      onChange();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h3>Top-ups</h3>
      <ErrorMessage error={error} />
      <form onSubmit={review} aria-label="Top up" className="inline-form">
        <div className="field">
          <label htmlFor="top-up-amount">Amount (USD)</label>
          <input
            id="top-up-amount"
            inputMode="decimal"
            required
            pattern="[0-9]{1,9}(\.[0-9]{1,6})?"
            value={amount}
            onChange={edit(setAmount)}
          />
        </div>
        <div className="field">
          <label htmlFor="top-up-note">Note</label>
          <input id="top-up-note" value={note} onChange={edit(setNote)} />
        </div>
        <button type="submit">Add funds</button>
      </form>
      {pending ? (
        <section aria-label="Confirm the top-up" className="confirm" ref={confirmBox} tabIndex={-1}>
          <p>
            Add <strong>{usd(pending.amount)}</strong> to {org.name}
            {pending.note ? ` (${pending.note})` : ""}?
          </p>
          <p data-testid="top-up-effect">
            Balance {usd(pending.before)} → <strong>{usd(pending.after)}</strong>
          </p>
          <div className="row-buttons">
            <button type="button" disabled={busy} onClick={() => apply(pending)}>
              Add {usd(pending.amount)}
            </button>
            <button type="button" className="secondary" onClick={() => setPending(null)}>
              Change
            </button>
          </div>
        </section>
      ) : null}
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Top-ups</caption>
          <thead>
            <tr>
              <th scope="col">Amount</th>
              <th scope="col">Note</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {topUps.map((t) => (
              <tr key={t.top_up_id}>
                <td data-label="Amount">{usd(t.amount_usd)}</td>
                <td data-label="Note">
                  <span className="clip" title={t.note ?? undefined}>
                    {t.note ?? "—"}
                  </span>
                </td>
                <td data-label="When">{date(t.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
