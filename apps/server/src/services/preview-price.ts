/** Price preview (interface, "Endpoints" 5): what a submit of this input would reserve. */
import type { PricePreview } from "@refvid/api-types";
import { formatUsd } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import { unitField } from "../views/price-unit.js";
import { readRunRequest } from "./run-request.js";

export async function previewPrice(
  deps: Pick<AppDeps, "catalog">,
  body: { endpoint: string; input: Record<string, unknown> },
): Promise<PricePreview> {
  const { price } = await readRunRequest(deps, body.endpoint, body.input);
  return {
    endpoint: body.endpoint as PricePreview["endpoint"],
    currency: "usd",
    unit_price: formatUsd(price.unitPrice),
    billable_seconds: price.billableSeconds,
    amount: formatUsd(price.amount),
    ...unitField(price.unit),
    price_tier: price.tier,
  };
}
