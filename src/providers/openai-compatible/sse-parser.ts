/**
 * Server-Sent Events → the `data` payload of each event (multi-line data joined with "\n").
 *
 * Small on purpose: OpenAI-compatible servers only use `data:` fields, so `event:`, `id:` and
 * `retry:` are read and ignored, comment lines (":keep-alive") are skipped. Lines end in "\n" or
 * "\r\n" (a bare "\r" terminator is not used by any such server and is not supported). An event
 * still open when the body ends is delivered too, since some servers omit the final blank line.
 */
export async function* parseSseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];

  for await (const chunk of body) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let lineStart = 0;
    let newline = buffer.indexOf('\n', lineStart);
    while (newline >= 0) {
      const end = newline > lineStart && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      const line = buffer.slice(lineStart, end);
      lineStart = newline + 1;
      newline = buffer.indexOf('\n', lineStart);

      if (line === '') {
        if (data.length > 0) {
          yield data.join('\n');
          data = [];
        }
        continue;
      }
      if (line.charCodeAt(0) === 58 /* ':' comment */) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      if (field !== 'data') continue;
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      data.push(value);
    }
    buffer = buffer.slice(lineStart);
  }

  buffer += decoder.decode();
  if (buffer.startsWith('data:')) data.push(buffer.slice(5).replace(/^ /, '').replace(/\r$/, ''));
  if (data.length > 0) yield data.join('\n');
}
