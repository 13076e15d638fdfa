/**
 * Items read a page at a time, each page starting after the last item of the one before (a keyset, so a page
 * costs the same however deep into the list it is, and rows added or removed meanwhile shift nothing), until a
 * page comes back short. What a section's export iterates: one page in memory at a time.
 */
export async function* paged<T, K>(
  read: (after: K | undefined, limit: number) => Promise<readonly T[]>,
  keyOf: (item: T) => K,
  pageSize: number,
): AsyncGenerator<T> {
  let after: K | undefined;
  for (;;) {
    const page = await read(after, pageSize);
    yield* page;
    const last = page.at(-1);
    if (page.length < pageSize || last === undefined) return;
    after = keyOf(last);
  }
}
