import type { UserDataSection } from '../users/index.js';
import type { FileService } from './file-service.js';
import { fileBody } from './wire.js';

/**
 * The `files` section of an end user's data: the files uploaded with their `user_id` (the bytes stay at
 * `GET /z1/files/{id}/content` while the export is read); the erase deletes them, each removed from every vector
 * store first. The account's own files (no `user_id`) are no end user's.
 */
export function filesUserData(files: FileService): UserDataSection<'files'> {
  return {
    name: 'files',
    async *export(tenant) {
      for (const file of await files.ownedBy(tenant.accountId, tenant.userId)) yield fileBody(file);
    },
    async erase(tenant) {
      const owned = await files.ownedBy(tenant.accountId, tenant.userId);
      for (const file of owned) await files.delete(file);
      return owned.length;
    },
  };
}
