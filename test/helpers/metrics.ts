/** Reads metrics the way a test asserts them: one series' value, or the exposition text parsed. */
import type { Counter } from 'prom-client'

/** The value of a prom-client counter's series with exactly these labels (0 before its first increment). */
export async function counterValue (counter: Counter<string>, labels: Readonly<Record<string, string>>): Promise<number> {
  const { values } = await counter.get()
  const want = Object.entries(labels)
  const hit = values.find(v => want.every(([k, val]) => v.labels[k] === val) && Object.keys(v.labels).length === want.length)
  return hit?.value ?? 0
}
