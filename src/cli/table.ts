/** "1 chunk", "2 chunks", "0 keys": a count with its noun in the right number. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/**
 * A list as the CLI prints it: a header row, then one row per item, columns padded to their widest cell and
 * two spaces apart (the last column unpadded, so no line ends in spaces). `empty` is printed instead when there
 * are no rows, so that "no keys" never looks like a header without data.
 */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>, empty: string): string {
  if (rows.length === 0) return empty;
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    headers
      .map((_, i) => (i === headers.length - 1 ? (cells[i] ?? '') : (cells[i] ?? '').padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
