/** Types of the exposition-format parser the tests use (the package ships none). */
declare module 'parse-prometheus-text-format' {
  interface ParsedFamily {
    readonly name: string
    readonly help: string
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'
    readonly metrics: ReadonlyArray<Readonly<Record<string, unknown>>>
  }
  export default function parsePrometheusTextFormat (text: string): ParsedFamily[]
}
