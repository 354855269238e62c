/** One field of the playground's form, drawn as its kind says, with its help and its problem. */
import { isUrlSchema } from "@refvid/client";
import type { ReactNode } from "react";
import type { Field } from "./schema.js";

export function FieldInput(props: {
  field: Field;
  value: string | boolean | undefined;
  problem: string | undefined;
  onChange: (value: string | boolean) => void;
  /** For a list of reference URLs: upload files and add their URLs. */
  upload?: ReactNode;
}) {
  const { field, value, problem, onChange, upload } = props;
  const { schema } = field;
  const id = `field-${field.name}`;
  const describedBy = [schema.description ? `${id}-help` : "", problem ? `${id}-error` : ""].join(" ").trim();
  const common = {
    id,
    name: field.name,
    "aria-invalid": problem ? true : undefined,
    "aria-describedby": describedBy || undefined,
    required: field.required,
  };
  const text = typeof value === "string" ? value : "";
  let control: ReactNode;
  if (field.kind === "boolean") {
    control = (
      <input
        {...common}
        type="checkbox"
        checked={value === true}
        onChange={(e) => onChange(e.target.checked)}
      />
    );
  } else if (field.kind === "select") {
    control = (
      <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
        {field.required || schema.default !== undefined ? null : <option value="">(not set)</option>}
        {(schema.enum ?? []).map((option) => (
          <option key={String(option)} value={String(option)}>
            {String(option)}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === "list" || field.kind === "longtext" || field.kind === "json") {
    control = (
      <textarea
        {...common}
        rows={field.kind === "longtext" ? 4 : 3}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else if (field.kind === "number" || field.kind === "integer") {
    control = (
      <input
        {...common}
        type="number"
        min={schema.minimum}
        max={schema.maximum}
        step={field.kind === "integer" ? 1 : "any"}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else {
    control = <input {...common} type="text" value={text} onChange={(e) => onChange(e.target.value)} />;
  }
  const upTo = schema.maxItems ? `, up to ${schema.maxItems}` : "";
  const listHelp =
    field.kind === "list"
      ? ` One ${schema.items && isUrlSchema(schema.items) ? "URL" : "value"} per line${upTo}.`
      : field.kind === "json"
        ? " As JSON."
        : "";
  return (
    <div className={`field field-${field.kind}`}>
      <label htmlFor={id}>
        {field.name}
        {field.required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {control}
      {schema.description || listHelp ? (
        <p className="help" id={`${id}-help`}>
          {schema.description}
          {listHelp}
        </p>
      ) : null}
      {problem ? (
        <p className="field-error" id={`${id}-error`}>
          {problem}
        </p>
      ) : null}
      {upload}
    </div>
  );
}
