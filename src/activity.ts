/**
 * What the process is doing, for the process-wide error handler: each background loop runs its
 * work inside `during(name, fn)`, and Node carries the name through every callback and promise
 * that work starts (AsyncLocalStorage), including the `error` events of the sockets it opened.
 * So an error nobody handled can be logged with the loop it came from.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

const running = new AsyncLocalStorage<string>()

/** Runs `fn` as `name`, for as long as anything it starts lives. */
export function during<T> (name: string, fn: () => T): T {
  return running.run(name, fn)
}

/** The name of what is running now, when it was named. */
export function currentActivity (): string | undefined {
  return running.getStore()
}
