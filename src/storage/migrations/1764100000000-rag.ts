import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents, their chunks and the ingestion job state (on the document row: a document in `processing`
 * is a job, so a restart finds every unfinished one by status), and the SQL chunk index (SqlChunkIndex):
 * what search needs per chunk, keyed by tenant. Lexical search: a contentless FTS5 table on SQLite (the
 * text stays in rag_chunks only), a tsvector with a GIN index on PostgreSQL. Vectors: float32 bytes.
 */
export class Rag1764100000000 implements MigrationInterface {
  name = 'Rag1764100000000';

  async up(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    const bigint = pg ? 'BIGINT' : 'INTEGER';
    const blob = pg ? 'BYTEA' : 'BLOB';
    const statements = [
      `CREATE TABLE rag_documents (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        title TEXT NOT NULL,
        content_type TEXT NOT NULL,
        size_bytes ${bigint} NOT NULL,
        metadata TEXT NOT NULL,
        text TEXT NOT NULL,
        pages TEXT NOT NULL,
        status TEXT NOT NULL,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        chunks_embedded INTEGER NOT NULL DEFAULT 0,
        failure_code TEXT,
        failure_message TEXT,
        lease_until ${bigint} NOT NULL DEFAULT 0,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX rag_documents_tenant ON rag_documents (account_id, user_id, created_at)',
      'CREATE INDEX rag_documents_status ON rag_documents (status)',
      `CREATE TABLE rag_chunks (
        seq ${pg ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
        id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL REFERENCES rag_documents(id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        text TEXT NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        page INTEGER,
        embedded INTEGER NOT NULL DEFAULT 0
      )`,
      'CREATE INDEX rag_chunks_tenant ON rag_chunks (account_id, user_id)',
      'CREATE INDEX rag_chunks_document ON rag_chunks (document_id, ordinal)',
      // The user's document version: bumped by every add and delete, read into the chat cache key.
      `CREATE TABLE rag_user_versions (
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        version ${bigint} NOT NULL,
        PRIMARY KEY (account_id, user_id)
      )`,
      // The chunk index (SqlChunkIndex). No foreign key to the documents: the index is a port of its own
      // (Qdrant is the other adapter), and a document's deletion reaches it through deleteDocument.
      `CREATE TABLE rag_index_chunks (
        seq ${pg ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        embedding ${blob}
        ${pg ? ', tsv tsvector NOT NULL' : ''}
      )`,
      'CREATE UNIQUE INDEX rag_index_chunks_id ON rag_index_chunks (account_id, user_id, chunk_id)',
      'CREATE INDEX rag_index_chunks_document ON rag_index_chunks (account_id, user_id, document_id)',
      // Bumped with every write of a tenant's vectors: a process holding them in memory (the embedded
      // vector index) reloads when another process (`pvai documents`) changed them.
      `CREATE TABLE rag_index_tenants (
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        generation ${bigint} NOT NULL,
        PRIMARY KEY (account_id, user_id)
      )`,
      // The embedding model and dimension the stored vectors came from: another is refused, never mixed.
      `CREATE TABLE rag_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    ];
    if (pg) {
      statements.push('CREATE INDEX rag_index_chunks_tsv ON rag_index_chunks USING GIN (tsv)');
    } else {
      // Contentless (the text is the document store's) with deletes (SQLite >= 3.43); porter stemming,
      // ASCII folding. Its rowid is rag_index_chunks.seq.
      statements.push(
        `CREATE VIRTUAL TABLE rag_index_fts USING fts5(text, content='', contentless_delete=1,
          tokenize='porter unicode61 remove_diacritics 2')`,
      );
    }
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    const tables = ['rag_index_fts', 'rag_index_chunks', 'rag_index_tenants', 'rag_chunks', 'rag_documents'];
    for (const table of [...tables, 'rag_user_versions', 'rag_settings']) {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
