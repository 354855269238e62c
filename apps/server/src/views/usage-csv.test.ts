import type { components } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { usageCsv } from "./usage-csv.js";

type Group = components["schemas"]["AccountUsageGroup"];

const HEADER =
  "group,environment,runs_total,runs_queued,runs_processing,runs_succeeded,runs_failed,runs_timeout," +
  "runs_cancelled,failures,billed_seconds,spend_usd,priced_usd\r\n";

const group = (name: string, overrides: Partial<Group> = {}): Group => ({
  group: name,
  environment: "live",
  runs: { total: 6, queued: 1, processing: 1, succeeded: 1, failed: 1, timeout: 1, cancelled: 1 },
  failures: 2,
  billed_seconds: 4,
  spend_usd: "0.284",
  priced_usd: "0.284",
  ...overrides,
});

const report = (data: Group[]): components["schemas"]["AccountUsageReport"] => ({
  from: "2026-11-01T00:00:00.000Z",
  to: "2026-12-01T00:00:00.000Z",
  group_by: "model",
  organization_id: "org_1",
  data,
});

describe("usageCsv", () => {
  it.each<[string, { given: Group[]; want: string }]>([
    ["no rows: the header alone", { given: [], want: HEADER }],
    [
      "a row's fields in order, runs spread, money as given",
      {
        given: [group("lab-d/model-d/reference-to-video")],
        want: `${HEADER}lab-d/model-d/reference-to-video,live,6,1,1,1,1,1,1,2,4,0.284,0.284\r\n`,
      },
    ],
    [
      "a test row: spends nothing, priced as run",
      {
        given: [group("2026-11-22", { environment: "test", spend_usd: "0.00" })],
        want: `${HEADER}2026-11-22,test,6,1,1,1,1,1,1,2,4,0.00,0.284\r\n`,
      },
    ],
    [
      "a comma, a quote or a line break is quoted, quotes doubled (RFC 4180)",
      {
        given: [group('lab,x/"m"/v'), group("line\nbreak"), group("cr\rlf")],
        want:
          `${HEADER}"lab,x/""m""/v",live,6,1,1,1,1,1,1,2,4,0.284,0.284\r\n` +
          `"line\nbreak",live,6,1,1,1,1,1,1,2,4,0.284,0.284\r\n` +
          `"cr\rlf",live,6,1,1,1,1,1,1,2,4,0.284,0.284\r\n`,
      },
    ],
  ])("%s", (_name, { given, want }) => {
    expect(usageCsv(report(given))).toBe(want);
  });
});
