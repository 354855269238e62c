/** Price preview (interface, "Endpoints" 5): what a submit of this input would reserve. */
import type { PricePreview } from "@refvid/api-types";
import {
  checkModelRules,
  formatUsd,
  InvalidRequestError,
  type ModelInput,
  type ModelSlug,
  normalizeInput,
  priceRequest,
} from "@refvid/core";

export function previewPrice(body: { endpoint: ModelSlug; input: Record<string, unknown> }): PricePreview {
  const request = normalizeInput(body.endpoint, body.input as ModelInput);
  const problems = checkModelRules(request);
  if (problems.length > 0) throw new InvalidRequestError(problems);
  const price = priceRequest(request);
  return {
    endpoint: body.endpoint,
    currency: "usd",
    unit_price: formatUsd(price.unitPrice),
    billable_seconds: price.billableSeconds,
    amount: formatUsd(price.amount),
    price_tier: price.tier,
  };
}
