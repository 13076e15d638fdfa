/** A field as RFC 4180 writes it: quoted (its quotes doubled) when it holds a comma, a quote or a line end. */
function field(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 text: the header row, then one row per record, every line ended by CRLF. */
export function csvOf(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  return [header, ...rows].map((row) => `${row.map(field).join(',')}\r\n`).join('');
}
