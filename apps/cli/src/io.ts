/**
 * Where output goes: results on stdout (one JSON document with `--json`), everything else (the
 * run id, progress, questions, errors) on stderr, so that `refvid … --json | jq` always works.
 * Colours only on a terminal, never with `NO_COLOR` set or `--no-color`.
 */
import picocolors from "picocolors";

export type Colors = ReturnType<typeof picocolors.createColors>;

/** The options every command inherits from the program. */
export interface GlobalOptions {
  json?: boolean;
  profile?: string;
  /** `false` with `--no-color`. */
  color?: boolean;
}

export interface Output {
  json: boolean;
  /** Colours for stdout and for stderr; both are plain text off a terminal. */
  c: Colors;
  ce: Colors;
  /** Whether stdin is a terminal, so that a question can be asked. */
  interactive: boolean;
  /** Whether stderr is a terminal, so that a progress bar can be drawn. */
  stderrIsTTY: boolean;
  /** A line of the result, on stdout. */
  print(line?: string): void;
  /** Text of the result as it is (a CSV document, say), on stdout. */
  write(text: string): void;
  /** A line of information, on stderr. */
  info(line?: string): void;
  /** The one JSON document of `--json`, on stdout. */
  printJson(value: unknown): void;
}

interface Stream {
  isTTY?: boolean;
  write(chunk: string): unknown;
}

/** Whether to colour `stream`: a terminal that is not `dumb`, unless NO_COLOR or --no-color; FORCE_COLOR forces. */
export function colorEnabled(stream: Stream, flag: boolean | undefined, env = process.env): boolean {
  if (flag === false || (env.NO_COLOR ?? "") !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true && env.TERM !== "dumb";
}

export function createOutput(options: GlobalOptions): Output {
  const { stdout, stderr, stdin } = process;
  return {
    json: options.json === true,
    c: picocolors.createColors(colorEnabled(stdout, options.color)),
    ce: picocolors.createColors(colorEnabled(stderr, options.color)),
    interactive: stdin.isTTY === true,
    stderrIsTTY: stderr.isTTY === true,
    print: (line = "") => void stdout.write(`${line}\n`),
    write: (text) => void stdout.write(text),
    info: (line = "") => void stderr.write(`${line}\n`),
    printJson: (value) => void stdout.write(`${JSON.stringify(value, null, 2)}\n`),
  };
}

/** The `--json` and `--no-color` of an argv, for errors reported before or outside commander. */
export function optionsFromArgv(argv: readonly string[]): GlobalOptions {
  const end = argv.indexOf("--");
  const args = end === -1 ? argv : argv.slice(0, end);
  return { json: args.includes("--json"), color: !args.includes("--no-color") };
}
