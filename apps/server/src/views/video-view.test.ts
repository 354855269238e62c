import type { RunRecord } from "@refvid/store";
import { describe, expect, it } from "vitest";
import { toVideo } from "./video-view.js";

const created = new Date("2026-11-29T10:00:00.000Z");
const run = (patch: Partial<RunRecord>): RunRecord =>
  ({
    id: "run_0f8c3a52-5d0e-4b8e-9d3c-2a7f1e6b9c41",
    status: "queued",
    progress: null,
    error: null,
    createdAt: created,
    completedAt: null,
    video: { model: "sora-2", seconds: "8", size: "1280x720", remixedFrom: null, deletedAt: null },
    ...patch,
  }) as RunRecord;
const view = (patch: Partial<RunRecord>) => toVideo(run(patch), { prompt: "p", retentionHours: 24 });
const ended = new Date(created.getTime() + 90_000);

describe("a run as OpenAI's video object", () => {
  it("maps the run's states onto queued, in_progress, completed and failed, with progress in percent", () => {
    expect(view({})).toMatchObject({ status: "queued", progress: 0, completed_at: null, expires_at: null });
    expect(view({ status: "processing", progress: 0.425 })).toMatchObject({
      status: "in_progress",
      progress: 42,
    });
    expect(view({ status: "succeeded", progress: 1, completedAt: ended })).toMatchObject({
      status: "completed",
      progress: 100,
      created_at: created.getTime() / 1000,
      completed_at: ended.getTime() / 1000,
      expires_at: ended.getTime() / 1000 + 24 * 3600,
      error: null,
    });
  });

  it("tells a cancelled and a timed-out run apart from a failure by error.code", () => {
    const error = (type: "cancelled" | "timeout" | "provider_error") => ({
      type,
      code: 500,
      message: `m ${type}`,
    });
    expect(view({ status: "failed", error: error("provider_error"), completedAt: ended }).error).toEqual({
      code: "provider_error",
      message: "m provider_error",
    });
    expect(view({ status: "cancelled", error: error("cancelled"), completedAt: ended })).toMatchObject({
      status: "failed",
      error: { code: "cancelled" },
      expires_at: null,
    });
    expect(view({ status: "timeout", error: error("timeout"), completedAt: ended })).toMatchObject({
      status: "failed",
      error: { code: "timeout" },
    });
  });

  it("shows the video's own terms: the model as named, seconds, size and the video it remixes", () => {
    const remix = view({
      video: { model: "sora-2", seconds: "4", size: "720x1280", remixedFrom: "run_a", deletedAt: null },
    });
    expect(remix).toMatchObject({
      object: "video",
      model: "sora-2",
      seconds: "4",
      size: "720x1280",
      remixed_from_video_id: "run_a",
      prompt: "p",
    });
  });
});
