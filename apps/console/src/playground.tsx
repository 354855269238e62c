/**
 * Pick a model, fill the form its input schema makes (checked as you type, priced live; reference
 * files uploaded in place), submit, and follow the run live to its video, next to the Run button,
 * with a link to the run's own page. The same request can be copied as curl, TypeScript or CLI.
 */
import {
  fieldOfProblem,
  inputSchemaOf,
  isUrlSchema,
  type Model,
  type RefvidClient,
  type Run,
  ValidationError,
} from "@refvid/client";
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { describeError, ErrorMessage } from "./errors.js";
import { FieldInput } from "./field-input.js";
import { ReferenceUpload, type UploadFile } from "./reference-upload.js";
import { runHash } from "./route.js";
import { RunView } from "./run-view.js";
import {
  addLine,
  type FormValues,
  fieldsOf,
  initialValues,
  inputOf,
  listItems,
  problemsOf,
} from "./schema.js";
import { cliSnippet, curlSnippet, typescriptSnippet } from "./snippets.js";
import { referenceOf, uploadReference } from "./upload.js";

const PRICE_DEBOUNCE_MS = 400;

type SnippetKind = "curl" | "TypeScript" | "CLI";

/** `key=value` lines as run metadata. */
function metadataOf(text: string): Record<string, string> | undefined {
  const pairs = listItems(text).flatMap((line) => {
    const at = line.indexOf("=");
    return at > 0 ? [[line.slice(0, at).trim(), line.slice(at + 1).trim()] as const] : [];
  });
  return pairs.length > 0 ? Object.fromEntries(pairs) : undefined;
}

/** A file dropped beside the drop box would open in the tab, and the form would be lost. */
function useNoStrayDrops() {
  useEffect(() => {
    const refuse = (event: DragEvent) => {
      if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
    };
    addEventListener("dragover", refuse);
    addEventListener("drop", refuse);
    return () => {
      removeEventListener("dragover", refuse);
      removeEventListener("drop", refuse);
    };
  }, []);
}

export function PlaygroundPage(props: { client: RefvidClient; apiKey: string; models: Model[] }) {
  const { client, apiKey, models } = props;
  const [chosen, setSlug] = useState("");
  const slug = chosen || (models[0]?.slug ?? "");
  const [metadata, setMetadata] = useState("");
  /** Ends the stream of the run shown, when another is submitted or the page goes. */
  const following = useRef<AbortController | null>(null);
  useEffect(() => () => following.current?.abort(), []);
  const [values, setValues] = useState<FormValues>({});
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [serverProblems, setServerProblems] = useState<Record<string, string>>({});
  const [price, setPrice] = useState<string>("");
  const [error, setError] = useState<unknown>();
  const [run, setRun] = useState<Run | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const [snippet, setSnippet] = useState<SnippetKind>("curl");
  const [copied, setCopied] = useState("");
  /** What pressing Run led to, an error or the run, is brought into view below the button. */
  const errorBox = useRef<HTMLDivElement>(null);
  const runBox = useRef<HTMLDivElement>(null);
  useNoStrayDrops();

  const model = models.find((m) => m.slug === slug);
  const fields = useMemo(() => (model ? fieldsOf(inputSchemaOf(model)) : []), [model]);
  useEffect(() => {
    setValues(initialValues(fields));
    setTouched(new Set());
    setServerProblems({});
  }, [fields]);

  const problems = problemsOf(fields, values);
  const valid = Object.keys(problems).length === 0;
  const input = useMemo(() => inputOf(fields, values), [fields, values]);
  const inputKey = JSON.stringify(input);

  useEffect(() => {
    if (!model || !valid) {
      setPrice("");
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      client.previewPrice(model.slug, JSON.parse(inputKey), { signal: controller.signal }).then(
        (p) =>
          setPrice(
            p.unit === "run"
              ? `$${p.amount} a run (${p.price_tier})`
              : `$${p.amount} (${p.billable_seconds} s at $${p.unit_price}/s, ${p.price_tier})`,
          ),
        (e) => controller.signal.aborted || setPrice(`No price: ${describeError(e)}`),
      );
    }, PRICE_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [client, model, valid, inputKey]);

  const change = useCallback(
    (name: string, value: (old: string | boolean | undefined) => string | boolean) => {
      setValues((v) => ({ ...v, [name]: value(v[name]) }));
      setTouched((t) => new Set(t).add(name));
      setServerProblems(({ [name]: _, ...rest }) => rest);
    },
    [],
  );
  const upload: UploadFile = useCallback(
    (file, options) => uploadReference(location.origin, apiKey, file, options),
    [apiKey],
  );

  useEffect(() => {
    if (error) errorBox.current?.scrollIntoView({ block: "nearest" });
  }, [error]);
  const runId = run?.run_id;
  useEffect(() => {
    if (runId) runBox.current?.scrollIntoView({ block: "nearest" });
  }, [runId]);

  /** Moves the focus to the first field with a problem, which brings it into view. */
  const focusField = (names: string[]) => {
    const first = fields.find((f) => names.includes(f.name));
    if (first) document.getElementById(`field-${first.name}`)?.focus();
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setTouched(new Set(fields.map((f) => f.name)));
    if (!model) return;
    if (!valid) {
      focusField(Object.keys(problems));
      return;
    }
    setError(undefined);
    setServerProblems({});
    setSubmitting(true);
    let queued: Run;
    try {
      queued = await client.submit(model.slug, input, {
        metadata: metadataOf(metadata),
      });
    } catch (e) {
      showSubmitError(e);
      return;
    } finally {
      setSubmitting(false);
    }
    setRun(queued);
    // Follow this run live; the form is free for the next one meanwhile.
    following.current?.abort();
    const controller = new AbortController();
    following.current = controller;
    try {
      for await (const update of client.streamRun(queued.run_id, { signal: controller.signal })) {
        setRun(update);
      }
    } catch (e) {
      if (!controller.signal.aborted) setError(e);
    }
  };

  /** A refused submit: each field's problem next to it, anything else below the Run button. */
  const showSubmitError = (e: unknown) => {
    if (!(e instanceof ValidationError)) {
      setError(e);
      return;
    }
    const byField: Record<string, string> = {};
    for (const problem of e.fields) {
      const name = fieldOfProblem(problem.field);
      if (name && fields.some((f) => f.name === name)) byField[name] ??= problem.message;
    }
    setServerProblems(byField);
    if (Object.keys(byField).length < e.fields.length) setError(e);
    else focusField(Object.keys(byField));
  };

  const snippetOf = (kind: SnippetKind) =>
    !model
      ? ""
      : kind === "curl"
        ? curlSnippet(location.origin, model, input)
        : kind === "TypeScript"
          ? typescriptSnippet(location.origin, model, input)
          : cliSnippet(model, models, input);
  const snippetText = snippetOf(snippet);

  const copy = async (kind: SnippetKind) => {
    setSnippet(kind);
    const text = snippetOf(kind);
    try {
      await navigator.clipboard.writeText(text);
      setCopied(`Copied as ${kind}.`);
    } catch {
      setCopied(`Select the ${kind} below and copy it.`);
    }
  };

  return (
    <div className="playground">
      <h1>Playground</h1>
      <form onSubmit={submit} noValidate aria-label="Run a model">
        <div className="field">
          <label htmlFor="model">Model</label>
          <select id="model" value={slug} onChange={(e) => setSlug(e.target.value)}>
            {models.map((m) => (
              <option key={m.slug} value={m.slug}>
                {m.name} — {m.slug}
              </option>
            ))}
          </select>
          {model ? <p className="help">{model.summary}</p> : null}
        </div>
        {fields.map((field) => (
          <FieldInput
            key={`${slug}:${field.name}`}
            field={field}
            value={values[field.name]}
            problem={
              serverProblems[field.name] ?? (touched.has(field.name) ? problems[field.name] : undefined)
            }
            onChange={(value) => change(field.name, () => value)}
            upload={
              model && field.kind === "list" && field.schema.items && isUrlSchema(field.schema.items) ? (
                <ReferenceUpload
                  field={field.name}
                  {...referenceOf(model, field.name)}
                  upload={upload}
                  onUploaded={(url) => change(field.name, (old) => addLine(old, url))}
                />
              ) : undefined
            }
          />
        ))}
        <div className="field">
          <label htmlFor="run-metadata">metadata</label>
          <textarea
            id="run-metadata"
            rows={2}
            value={metadata}
            onChange={(e) => setMetadata(e.target.value)}
            aria-describedby="run-metadata-help"
          />
          <p className="help" id="run-metadata-help">
            Your key=value pairs, one per line, kept on the run and searchable on the Runs page.
          </p>
        </div>
        <p className="price" aria-live="polite">
          Price: <output data-testid="price">{valid ? price || "…" : "complete the form to see it"}</output>
        </p>
        <button type="submit" disabled={submitting || !model}>
          {submitting ? "Running…" : "Run"}
        </button>
        <div ref={errorBox}>
          <ErrorMessage error={error} />
        </div>
      </form>
      <div aria-live="polite" ref={runBox}>
        {run ? (
          <RunView
            run={run}
            link={
              <a href={runHash(run.run_id)} data-testid="run-link">
                Open this run's page
              </a>
            }
          />
        ) : null}
      </div>
      <section aria-label="Copy this request" className="snippets">
        <div className="buttons">
          {(["curl", "TypeScript", "CLI"] as const).map((kind) => (
            <button key={kind} type="button" onClick={() => copy(kind)} aria-pressed={snippet === kind}>
              Copy as {kind}
            </button>
          ))}
        </div>
        <p aria-live="polite" className="help">
          {copied}
        </p>
        <pre data-testid="snippet">{snippetText}</pre>
      </section>
    </div>
  );
}
