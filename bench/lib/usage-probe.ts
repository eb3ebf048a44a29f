/**
 * Preloaded (`node --import tsx --import ./bench/lib/usage-probe.ts …`) into every Node server
 * the benchmark starts, so that CPU time and memory come from the process's own accounting
 * instead of the runner's guesses. It answers `{ type: 'usage', resetPeak }` messages on the IPC
 * channel with what `UsageReport` holds, and stops the process when the runner goes away.
 * Bench code only: nothing in the product loads it.
 */
import type { UsageReport } from './usage.js'

const SAMPLE_MS = 100

if (typeof process.send === 'function') {
  let peakRss = process.memoryUsage.rss()
  // rusage's maxRSS never resets, so the peak of one scenario is sampled here; a 100 ms timer
  // costs a few µs per tick, far below what the measurements resolve.
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss()
    if (rss > peakRss) peakRss = rss
  }, SAMPLE_MS)
  sampler.unref()

  process.on('message', (msg: unknown) => {
    if (typeof msg !== 'object' || msg === null || (msg as { type?: unknown }).type !== 'usage') return
    const cpu = process.cpuUsage()
    const rss = process.memoryUsage.rss()
    if (rss > peakRss) peakRss = rss
    const report: UsageReport = {
      type: 'usage',
      cpuUs: cpu.user + cpu.system,
      rss,
      peakRss,
      maxRss: process.resourceUsage().maxRSS * 1024,
      heapUsed: process.memoryUsage().heapUsed
    }
    if ((msg as { resetPeak?: unknown }).resetPeak === true) peakRss = rss
    process.send?.(report)
  })
  process.channel?.unref()
  // The runner is gone (finished, crashed or killed): do not outlive it.
  process.on('disconnect', () => {
    process.kill(process.pid, 'SIGTERM')
    setTimeout(() => process.exit(0), 2000).unref()
  })
}
