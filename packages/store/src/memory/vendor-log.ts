/** The vendor log in memory: entries per run, in the order added. */
import type { VendorEvent, VendorLogStore } from "../vendor-types.js";
import { copy } from "./copy.js";

export class MemoryVendorLog implements Pick<VendorLogStore, "addVendorEvent" | "listVendorEvents"> {
  private readonly entries = new Map<string, VendorEvent[]>();

  constructor(private readonly onHook: (runId: string) => void) {}

  readonly addVendorEvent = async (event: VendorEvent): Promise<void> => {
    const list = this.entries.get(event.runId) ?? [];
    list.push(copy(event));
    this.entries.set(event.runId, list);
    if (event.kind === "hook") this.onHook(event.runId);
  };

  readonly listVendorEvents = async (runId: string): Promise<VendorEvent[]> =>
    (this.entries.get(runId) ?? []).map((event) => copy(event));
}
