/**
 * A table cell that asks before a step that cannot be taken back (revoke a key, remove its
 * budget): the question, then the step's button (red) and "Keep it", which takes it back.
 */
import type { ReactNode } from "react";

export function ConfirmCell(props: {
  /** The cell's `data-label`: its column, on a phone. */
  label: string;
  /** The question's element id, which describes the step's button. */
  id: string;
  question: ReactNode;
  /** What the step's button says: `Yes, revoke sk-live-…`. */
  yes: string;
  busy: boolean;
  onYes: () => void;
  onKeep: () => void;
  children?: ReactNode;
}) {
  return (
    <td data-label={props.label} className="confirm-cell">
      <p id={props.id}>{props.question}</p>
      <div className="row-buttons">
        <button
          type="button"
          className="danger"
          disabled={props.busy}
          onClick={props.onYes}
          aria-describedby={props.id}
        >
          {props.yes}
        </button>
        <button type="button" className="secondary" onClick={props.onKeep}>
          Keep it
        </button>
      </div>
      {props.children}
    </td>
  );
}
