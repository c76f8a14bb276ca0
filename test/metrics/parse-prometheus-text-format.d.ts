/** Types of parse-prometheus-text-format (it ships none): the prom2json shape it returns. */
declare module 'parse-prometheus-text-format' {
  interface ParsedSample {
    labels?: Record<string, string>;
    value: string;
    timestamp_ms?: string;
  }
  interface ParsedFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED';
    metrics: ParsedSample[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
