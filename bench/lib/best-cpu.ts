/**
 * CPU µs per call of each part, the best of `rounds` rounds of `calls` calls (process.cpuUsage),
 * after one warm-up round. The best round is the one least disturbed by the rest of the machine.
 */
export function bestCpuPerCall (parts: ReadonlyArray<readonly [string, () => unknown]>, rounds: number, calls: number): number[] {
  const best = parts.map(() => Infinity)
  for (const [, f] of parts) for (let i = 0; i < calls; i++) f()
  for (let r = 0; r < rounds; r++) {
    parts.forEach(([, f], k) => {
      const start = process.cpuUsage()
      for (let i = 0; i < calls; i++) f()
      const used = process.cpuUsage(start)
      best[k] = Math.min(best[k] as number, (used.user + used.system) / calls)
    })
  }
  return best
}
