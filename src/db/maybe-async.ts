/**
 * The hot paths answer synchronously on SQLite and with a promise on PostgreSQL. `settle` goes on with
 * the value at once when it is there (so SQLite keeps its synchronous order) and when the promise
 * resolves otherwise; a failure (thrown or rejected) goes to `failed`.
 */
export function settle<T> (run: () => T | Promise<T>, done: (value: T) => void, failed: (err: unknown) => void): void {
  let value: T | Promise<T>
  try {
    value = run()
  } catch (err) {
    failed(err)
    return
  }
  if (value instanceof Promise) value.then(done, failed)
  else done(value)
}
