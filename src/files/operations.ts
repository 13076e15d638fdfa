import { once } from 'node:events';
import { AppError } from '../errors/index.js';
import {
  type Call,
  endUserOf,
  identifierProblem,
  invalidText,
  type Operations,
  requirePrincipal,
} from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { FileService, FormCheck } from './file-service.js';
import type { FilePurpose, Owner } from './types.js';
import { fileBody } from './wire.js';

type FileOperationId = 'createFile' | 'listFiles' | 'retrieveFile' | 'deleteFile' | 'downloadFile';

const PURPOSES: readonly string[] = ['assistants', 'user_data'];
/** OpenAI's other purposes, refused with what pvai does instead. */
const REFUSED_PURPOSES: readonly string[] = ['batch', 'fine-tune', 'vision', 'evals'];
const FORM_FIELDS = new Set(['purpose', 'user_id']);

/** Who sees what: the account's files, or through a key bound to an end user, that end user's alone. */
export function viewerOf(call: Call): Owner {
  const principal = requirePrincipal(call);
  return { accountId: principal.account.id, userId: principal.key.userId };
}

function formCheck(call: Call): FormCheck {
  const principal = requirePrincipal(call);
  return (fields) => {
    const unknown = Object.keys(fields).find((name) => !FORM_FIELDS.has(name));
    if (unknown !== undefined) {
      throw new AppError('INVALID_PARAMETER', `Unknown form field ${unknown}`, {
        field: unknown,
        reason: 'unknown field',
      });
    }
    const purpose = fields.purpose;
    if (purpose === undefined || !PURPOSES.includes(purpose)) {
      const reason = REFUSED_PURPOSES.includes(purpose ?? '')
        ? `${purpose} files are not served: pvai runs no batches, tuning or evaluations, and its models read text`
        : 'must be assistants or user_data';
      throw new AppError('INVALID_PARAMETER', `purpose ${reason}`, { field: 'purpose', reason });
    }
    const named = fields.user_id;
    if (named !== undefined) {
      const bad = identifierProblem('user_id', named);
      if (bad) throw invalidText(bad);
      // Counted in code points, as the contract's maxLength counts them (a character outside the BMP is one).
      if ([...named].length > 256) {
        throw new AppError('INVALID_PARAMETER', 'user_id is longer than 256 characters', {
          field: 'user_id',
          reason: 'must be at most 256 characters',
        });
      }
    }
    const userId = named === undefined ? principal.key.userId : endUserOf(principal, named);
    if (userId !== null) call.usage.userId = userId;
    return { purpose: purpose as FilePurpose, userId };
  };
}

/** /z1/files: OpenAI's Files API, the bytes in the service's database. */
export function fileOperations(files: FileService, tiers: Pick<TierPolicy, 'rulesFor'>): Operations<FileOperationId> {
  const owned = async (call: Call, id: string) => {
    const file = await files.get(viewerOf(call), id);
    if (file.userId !== null) call.usage.userId = file.userId;
    return file;
  };
  return {
    createFile: async (_request, call) => {
      const upload = call.streamedUpload;
      if (!upload) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'A file is uploaded as multipart/form-data', {
          content_type: 'multipart/form-data',
        });
      }
      const principal = requirePrincipal(call);
      const rules = tiers.rulesFor(principal.account);
      const file = await files.upload(
        principal.account.id,
        upload,
        { maxFileBytes: rules.maxFileBytes, maxStoredBytes: rules.maxStoredBytes, maxFiles: rules.maxFiles },
        formCheck(call),
      );
      return { status: 200, body: fileBody(file) };
    },
    listFiles: async ({ query }, call) => {
      const viewer = viewerOf(call);
      if (query.after !== undefined) await files.get(viewer, query.after);
      const limit = query.limit ?? 10_000;
      const page = await files.list(viewer, {
        order: query.order ?? 'desc',
        limit: limit + 1,
        after: query.after,
        purpose: query.purpose,
      });
      const data = page.slice(0, limit).map(fileBody);
      return {
        status: 200,
        body: {
          object: 'list',
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: page.length > limit,
        },
      };
    },
    retrieveFile: async ({ params }, call) => ({ status: 200, body: fileBody(await owned(call, params.file_id)) }),
    deleteFile: async ({ params }, call) => {
      await files.delete(await owned(call, params.file_id));
      return { status: 200, body: { id: params.file_id, object: 'file', deleted: true } };
    },
    downloadFile: async ({ params }, call) => {
      const file = await owned(call, params.file_id);
      const stream = files.download(file);
      const finished = once(stream, 'close').then(() => undefined);
      return {
        status: 200,
        type: 'application/octet-stream',
        headers: {
          'Content-Length': String(file.bytes),
          'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
        },
        stream,
        finished,
      };
    },
  };
}
