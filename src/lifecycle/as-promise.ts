/** A task's promise, with a throw before the task made its promise handed back as that promise's rejection. */

/**
 * For plain functions on hot paths that hand a task's promise on instead of wrapping it in an async
 * frame (decision 207): their callers then see one way of failing, never a synchronous throw.
 */
export function asPromise<T>(task: () => Promise<T>): Promise<T> {
  try {
    return task();
  } catch (error) {
    return Promise.reject(error);
  }
}
