/** The vendor log in memory: entries per run, in the order added. */
import type { VendorEvent, VendorLogStore } from "../vendor-types.js";
import { copy } from "./copy.js";

export class MemoryVendorLog
  implements Pick<VendorLogStore, "addVendorEvent" | "listVendorEvents" | "vendorHookPayload">
{
  private readonly entries = new Map<string, VendorEvent[]>();

  constructor(private readonly onHook: (runId: string) => void) {}

  readonly addVendorEvent = async (event: VendorEvent): Promise<void> => {
    const list = this.entries.get(event.runId) ?? [];
    list.push({ ...copy(event), payload: event.payload ?? null });
    this.entries.set(event.runId, list);
    if (event.kind === "hook") this.onHook(event.runId);
  };

  readonly listVendorEvents = async (runId: string): Promise<VendorEvent[]> =>
    (this.entries.get(runId) ?? []).map(({ payload: _, ...event }) => copy(event));

  readonly vendorHookPayload: VendorLogStore["vendorHookPayload"] = async (input) => {
    const hooks = (this.entries.get(input.runId) ?? []).filter(
      (event) =>
        event.kind === "hook" &&
        event.provider === input.provider &&
        event.upstreamId === input.upstreamId &&
        event.detail === input.status,
    );
    return hooks.at(-1)?.payload ?? null;
  };
}
