import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OpenAI's Files and Vector Stores APIs. A file's bytes are rows of `file_parts` (1 MiB each, written as the upload
 * arrives; a file is `uploading` until its last part is in and the account's total checked). A vector store is a
 * set of documents of pvai's own ingestion (`rag_documents`, under the store's own tenant): `vector_store_files`
 * links each file attached to the document made of it; one with neither a document nor a status is waiting for its
text to be extracted (leased by `lease_until`, so a crashed replica's attachment is taken up by another). `owner_user_id` is the end user a file or store belongs to
 * ('' for the account's), so an erase finds theirs by index. A document may carry its own chunk window (a store's
 * `static` chunking strategy); null is the chunker's default.
 */
export class FilesAndVectorStores1796100000000 implements MigrationInterface {
  name = 'FilesAndVectorStores1796100000000';

  async up(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    const bigint = postgres ? 'BIGINT' : 'INTEGER';
    const blob = postgres ? 'BYTEA' : 'BLOB';
    const statements = [
      `CREATE TABLE files (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        owner_user_id TEXT NOT NULL,
        filename TEXT NOT NULL,
        purpose TEXT NOT NULL,
        content_type TEXT NOT NULL,
        bytes ${bigint} NOT NULL,
        status TEXT NOT NULL,
        created_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX files_account ON files (account_id, created_at, id)',
      'CREATE INDEX files_owner ON files (account_id, owner_user_id)',
      `CREATE TABLE file_parts (
        file_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        data ${blob} NOT NULL,
        PRIMARY KEY (file_id, ordinal)
      )`,
      `CREATE TABLE vector_stores (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        owner_user_id TEXT NOT NULL,
        name TEXT,
        description TEXT,
        metadata TEXT NOT NULL,
        chunk_chars INTEGER,
        overlap_chars INTEGER,
        expires_after_days INTEGER,
        last_active_at ${bigint} NOT NULL,
        expired INTEGER NOT NULL DEFAULT 0,
        created_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX vector_stores_account ON vector_stores (account_id, created_at, id)',
      'CREATE INDEX vector_stores_owner ON vector_stores (account_id, owner_user_id)',
      `CREATE TABLE vector_store_files (
        vector_store_id TEXT NOT NULL,
        file_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        document_id TEXT,
        batch_id TEXT,
        attributes TEXT NOT NULL,
        chunk_chars INTEGER NOT NULL,
        overlap_chars INTEGER NOT NULL,
        bytes ${bigint} NOT NULL,
        status TEXT,
        error_code TEXT,
        error_message TEXT,
        lease_until ${bigint} NOT NULL DEFAULT 0,
        created_at ${bigint} NOT NULL,
        PRIMARY KEY (vector_store_id, file_id)
      )`,
      'CREATE INDEX vector_store_files_file ON vector_store_files (file_id)',
      'CREATE INDEX vector_store_files_document ON vector_store_files (document_id)',
      'CREATE INDEX vector_store_files_pending ON vector_store_files (lease_until) WHERE document_id IS NULL AND status IS NULL',
      `CREATE TABLE vector_store_file_batches (
        id TEXT PRIMARY KEY,
        vector_store_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        cancelled INTEGER NOT NULL DEFAULT 0,
        created_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX vector_store_file_batches_store ON vector_store_file_batches (vector_store_id)',
      'ALTER TABLE rag_documents ADD COLUMN chunk_chars INTEGER',
      'ALTER TABLE rag_documents ADD COLUMN overlap_chars INTEGER',
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const column of ['overlap_chars', 'chunk_chars']) {
      await runner.query(`ALTER TABLE rag_documents DROP COLUMN ${column}`);
    }
    for (const table of ['vector_store_file_batches', 'vector_store_files', 'vector_stores', 'file_parts', 'files']) {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
