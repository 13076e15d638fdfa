import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/index.js';
import { type FileRecord, type FileService, viewerOf } from '../files/index.js';
import type { Call, Operations, Schema } from '../http/index.js';
import type { VectorStoreBackground } from './background.js';
import type { SqlStoreFiles } from './sql-store-files.js';
import type { SqlVectorStores } from './sql-vector-stores.js';
import { ownedStore, pageOf } from './store-operations.js';
import type { BatchRecord, VectorStoreRecord } from './types.js';
import type { Attach, VectorStoreService } from './vector-store-service.js';
import { attributesOf, batchBody, chunkWindow, linkBody } from './wire.js';

type FileOperationId =
  | 'createVectorStoreFile'
  | 'listVectorStoreFiles'
  | 'getVectorStoreFile'
  | 'updateVectorStoreFile'
  | 'deleteVectorStoreFile'
  | 'getVectorStoreFileContent'
  | 'createVectorStoreFileBatch'
  | 'getVectorStoreFileBatch'
  | 'cancelVectorStoreFileBatch'
  | 'listVectorStoreFileBatchFiles';

export interface FileOperationDeps {
  stores: VectorStoreService;
  files: FileService;
  links: SqlStoreFiles;
  storeRows: SqlVectorStores;
  background: Pick<VectorStoreBackground, 'kick'>;
  clock: () => number;
}

type ListQuery = {
  limit?: number;
  order?: 'asc' | 'desc';
  after?: string;
  before?: string;
  filter?: 'in_progress' | 'completed' | 'failed' | 'cancelled';
};

/** The files of a store (or of one of its batches) and their attachments: /z1/vector_stores/{id}/files, …/file_batches. */
export function storeFileOperations(deps: FileOperationDeps): Operations<FileOperationId> {
  const { stores, files, links, storeRows, background } = deps;

  /** The viewer's file for an attach, 404 naming where the id was given. */
  const fileFor = async (call: Call, id: string, field: string): Promise<FileRecord> =>
    files.get(viewerOf(call), id).catch((err: unknown) => {
      throw err instanceof AppError ? new AppError(err.code, err.message, { file_id: id, field }) : err;
    });

  const batchOf = async (store: VectorStoreRecord, id: string): Promise<BatchRecord> => {
    const batch = await storeRows.batch(store.id, id);
    if (!batch) throw new AppError('NOT_FOUND', `No file batch ${id} in vector store ${store.id}`, { batch_id: id });
    return batch;
  };
  const batchAnswer = async (store: VectorStoreRecord, batch: BatchRecord) =>
    batchBody(batch, (await stores.usage(store, batch.id)).counts);

  const listFiles = async (store: VectorStoreRecord, query: ListQuery, batchId?: string) => {
    const limit = query.limit ?? 20;
    const cursorId = query.after ?? query.before;
    const cursor = cursorId === undefined ? undefined : await stores.link(store, cursorId);
    const page = await links.list(
      store.id,
      {
        order: query.order ?? 'desc',
        limit: limit + 1,
        after: query.after,
        before: query.before,
        status: query.filter,
        batchId,
      },
      cursor,
    );
    return pageOf(page.map(linkBody), limit);
  };

  return {
    createVectorStoreFile: async ({ params, body }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      const file = await fileFor(call, body.file_id, 'file_id');
      const link = await stores.attach(
        store,
        file,
        {
          attributes: attributesOf(body.attributes, 'attributes'),
          chunking: chunkWindow(body.chunking_strategy, 'chunking_strategy'),
        },
        true,
      );
      return { status: 200, body: linkBody(link) };
    },
    listVectorStoreFiles: async ({ params, query }, call) => ({
      status: 200,
      body: await listFiles(await ownedStore(stores, call, params.vector_store_id), query),
    }),
    getVectorStoreFile: async ({ params }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      return { status: 200, body: linkBody(await stores.link(store, params.file_id)) };
    },
    updateVectorStoreFile: async ({ params, body }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      const link = await stores.link(store, params.file_id);
      const attributes = attributesOf(body.attributes, 'attributes');
      await stores.setAttributes(store, link, attributes);
      return { status: 200, body: linkBody({ ...link, attributes }) };
    },
    deleteVectorStoreFile: async ({ params }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      await stores.detach(store, await stores.link(store, params.file_id));
      return { status: 200, body: { id: params.file_id, object: 'vector_store.file.deleted', deleted: true } };
    },
    getVectorStoreFileContent: async ({ params }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      const link = await stores.link(store, params.file_id);
      const text = await stores.text(store, link);
      const parts = text === '' ? [] : [{ type: 'text' as const, text }];
      return {
        status: 200,
        body: {
          object: 'vector_store.file_content.page',
          data: parts,
          has_more: false,
          next_page: null,
          file_id: link.fileId,
          filename: link.filename,
          attributes: link.attributes,
          content: parts,
        },
      };
    },
    createVectorStoreFileBatch: async ({ params, body }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      stores.requireLive(store);
      // Every id and every item's attributes and strategy checked before anything is stored: a refusal attaches
      // nothing.
      const chosen: Array<{ file: FileRecord; how: Attach }> = [];
      for (const item of batchItems(body)) {
        chosen.push({
          file: await fileFor(call, item.file_id, item.idField),
          how: {
            attributes: attributesOf(item.attributes, `${item.prefix}attributes`),
            chunking: chunkWindow(item.chunking_strategy, `${item.prefix}chunking_strategy`),
          },
        });
      }
      const batch: BatchRecord = {
        id: `vsfb_${randomBytes(12).toString('hex')}`,
        vectorStoreId: store.id,
        accountId: store.accountId,
        cancelled: false,
        createdAt: deps.clock(),
      };
      await storeRows.insertBatch(batch);
      for (const { file, how } of chosen) await stores.attach(store, file, { ...how, batchId: batch.id }, false);
      background.kick();
      return { status: 200, body: await batchAnswer(store, batch) };
    },
    getVectorStoreFileBatch: async ({ params }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      return { status: 200, body: await batchAnswer(store, await batchOf(store, params.batch_id)) };
    },
    cancelVectorStoreFileBatch: async ({ params }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      const batch = await batchOf(store, params.batch_id);
      await storeRows.cancelBatch(batch.id);
      for (const link of await links.all(store.id, batch.id)) {
        if (link.status !== 'in_progress') continue;
        await links.setOutcome(store.id, link.fileId, 'cancelled', null);
        if (link.documentId) await stores.dropDocument(store, link.documentId);
      }
      return { status: 200, body: await batchAnswer(store, { ...batch, cancelled: true }) };
    },
    listVectorStoreFileBatchFiles: async ({ params, query }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      const batch = await batchOf(store, params.batch_id);
      return { status: 200, body: await listFiles(store, query, batch.id) };
    },
  };
}

type BatchRequest = Schema<'VectorStoreFileBatchCreateRequest'>;

/** A batch's files, each with its attributes and strategy: `files`, or `file_ids` sharing the batch's. */
function batchItems(body: BatchRequest) {
  if (body.files && body.file_ids) {
    throw new AppError('INVALID_PARAMETER', 'Give file_ids or files, not both', {
      field: 'files',
      reason: 'with file_ids',
    });
  }
  if (body.files) return body.files.map((f, i) => ({ ...f, idField: `files[${i}].file_id`, prefix: `files[${i}].` }));
  if (!body.file_ids) {
    throw new AppError('INVALID_PARAMETER', 'file_ids or files is required', {
      field: 'file_ids',
      reason: 'is required',
    });
  }
  // The batch's own attributes and strategy, shared by every file_id: a refusal names the batch's field.
  return body.file_ids.map((id, i) => ({
    file_id: id,
    attributes: body.attributes,
    chunking_strategy: body.chunking_strategy,
    idField: `file_ids[${i}]`,
    prefix: '',
  }));
}
