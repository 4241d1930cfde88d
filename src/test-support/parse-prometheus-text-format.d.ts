/** Types for the parse-prometheus-text-format package (it ships none), as far as the tests use it. */
declare module "parse-prometheus-text-format" {
  interface Sample {
    value: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  interface Family {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: Sample[];
  }
  export default function parse(text: string): Family[];
}
