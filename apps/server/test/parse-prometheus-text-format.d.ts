/** Types of parse-prometheus-text-format 1.1.1, which ships none (its output follows prom2json). */
declare module "parse-prometheus-text-format" {
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    /** COUNTER, GAUGE, HISTOGRAM, SUMMARY or UNTYPED. */
    type: string;
    metrics: PrometheusSample[];
  }
  /** Throws an `InvalidLineError` on a line the text format does not allow. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
