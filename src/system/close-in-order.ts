/** One part of a runtime to close, named for the report of what failed. */
export interface ClosingPart {
  name: string;
  close(): Promise<unknown> | unknown;
}

/**
 * Closes every part, one after the other in the order given (a part may still use those after it, so the
 * database comes last), and goes on when one fails: each part is closed whatever happened to the others.
 * Every failure is then reported at once, as an AggregateError naming the parts that failed.
 */
export async function closeInOrder(parts: readonly ClosingPart[]): Promise<void> {
  const failures: unknown[] = [];
  const failed: string[] = [];
  for (const part of parts) {
    try {
      await part.close();
    } catch (err) {
      failures.push(err);
      failed.push(part.name);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, `closing failed: ${failed.join(', ')}`);
}
