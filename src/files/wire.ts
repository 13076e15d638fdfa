import type { Schema } from '../http/index.js';
import type { FileRecord } from './types.js';

export function fileBody(file: FileRecord): Schema<'FileObject'> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: Math.floor(file.createdAt / 1000),
    expires_at: null,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    status_details: null,
    content_type: file.contentType,
    user_id: file.userId,
  };
}
