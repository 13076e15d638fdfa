import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { type DocumentRecord, type DocumentService, documentBody, fileToDocument, withDocuments } from '../compose.js';
import { loadConfig } from '../config/index.js';
import { Extractor } from '../extract/index.js';
import { formatProgressBar } from '../providers/index.js';
import { plural, table } from './table.js';

/** The service's document capability on the same storage (PVAI_DATA_DIR or DATABASE_URL). */
function withDocumentService<T>(
  fn: (documents: DocumentService) => Promise<T>,
  options: { embed: boolean },
): Promise<T> {
  const config = loadConfig();
  const logger = pino({ level: config.logLevel === 'info' ? 'warn' : config.logLevel });
  return withDocuments(config, { embed: options.embed, logger }, fn);
}

/** Documents as a headed table: id, title, chunks, status (a failure with its reason). */
function documentsTable(docs: readonly DocumentRecord[]): string {
  return table(
    ['ID', 'TITLE', 'CHUNKS', 'STATUS'],
    docs.map((d) => [
      d.id,
      d.title,
      String(d.chunkCount),
      d.status === 'failed' ? `failed: ${d.failure?.message ?? ''}` : d.status,
    ]),
    'no documents',
  );
}

/** `pvai documents add|list|rm`: a user's documents from the command line, with the server's ingestion. */
export function registerDocumentsCommands(program: Command): void {
  const docs = program
    .command('documents')
    .alias('docs')
    .description("manage an end user's documents (RAG); `docs` is its short form");
  docs
    .command('add')
    .description('upload files (txt, md, html, pdf, docx) and index them, with progress')
    .requiredOption('--account <id>')
    .requiredOption('--user <user_id>')
    .argument('<files...>')
    .option('--json')
    .action(async (files: string[], o: { account: string; user: string; json?: boolean }) => {
      const tenant = { accountId: o.account, userId: o.user };
      // Every file read before any is stored: a wrong path refuses the whole command, adding nothing.
      const contents = await Promise.all(files.map(async (file) => ({ file, bytes: await readFile(file) })));
      await withDocumentService(
        async (documents) => {
          const extractor = new Extractor();
          const added: DocumentRecord[] = [];
          for (const { file, bytes } of contents) {
            const document = await fileToDocument(bytes, basename(file), '', extractor);
            added.push(await documents.create(tenant, document));
          }
          const out = process.stderr;
          let docsNow = added;
          for (;;) {
            docsNow = await Promise.all(added.map((d) => documents.get(tenant, d.id)));
            const total = docsNow.reduce((n, d) => n + Math.max(1, d.chunkCount) * 2, 0);
            const done = docsNow.reduce(
              (n, d) =>
                n + (d.status === 'processing' ? d.chunkCount + d.chunksEmbedded : Math.max(1, d.chunkCount) * 2),
              0,
            );
            const bar = formatProgressBar({ receivedBytes: done, totalBytes: total }).replace(/ {2}.*$/, '');
            if (out.isTTY) out.write(`\r${bar} ${done}/${total} steps`);
            if (docsNow.every((d) => d.status !== 'processing')) break;
            await new Promise((r) => setTimeout(r, 200));
          }
          if (out.isTTY) out.write('\n');
          const chunks = docsNow.reduce((n, d) => n + d.chunkCount, 0);
          const summary = `added ${plural(docsNow.length, 'document')}, ${plural(chunks, 'chunk')}`;
          console.log(
            o.json ? JSON.stringify({ data: docsNow.map(documentBody) }) : `${documentsTable(docsNow)}\n${summary}`,
          );
          if (docsNow.some((d) => d.status === 'failed')) process.exitCode = 1;
        },
        { embed: true },
      );
    });
  docs
    .command('list')
    .requiredOption('--account <id>')
    .requiredOption('--user <user_id>')
    .option('--json')
    .action(async (o: { account: string; user: string; json?: boolean }) => {
      await withDocumentService(
        async (documents) => {
          const list = await documents.list({ accountId: o.account, userId: o.user });
          console.log(o.json ? JSON.stringify({ data: list.map(documentBody) }) : documentsTable(list));
        },
        { embed: false },
      );
    });
  docs
    .command('rm')
    .requiredOption('--account <id>')
    .requiredOption('--user <user_id>')
    .argument('<document_ids...>')
    .action(async (ids: string[], o: { account: string; user: string }) => {
      await withDocumentService(
        async (documents) => {
          for (const id of ids) {
            await documents.delete({ accountId: o.account, userId: o.user }, id);
            console.log(`deleted ${id}`);
          }
        },
        { embed: false },
      );
    });
}
