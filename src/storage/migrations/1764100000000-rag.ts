import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents, their chunks and the ingestion job state (on the document row: a document in `processing`
 * is a job, so a restart finds every unfinished one by status). Lexical search: FTS5 on SQLite, a
 * generated tsvector with a GIN index on PostgreSQL. Vectors are stored beside the chunk (float32 bytes).
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
        embedding ${blob}
        ${pg ? ", tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED" : ''}
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
      // The embedding model the stored vectors came from: another model is refused, never mixed.
      `CREATE TABLE rag_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    ];
    if (pg) {
      statements.push('CREATE INDEX rag_chunks_tsv ON rag_chunks USING GIN (tsv)');
    } else {
      // External-content FTS5 over rag_chunks, kept in step by triggers (porter stemming, ASCII folding).
      statements.push(
        `CREATE VIRTUAL TABLE rag_chunks_fts USING fts5(text, content='rag_chunks', content_rowid='seq',
          tokenize='porter unicode61 remove_diacritics 2')`,
        `CREATE TRIGGER rag_chunks_ai AFTER INSERT ON rag_chunks BEGIN
          INSERT INTO rag_chunks_fts(rowid, text) VALUES (new.seq, new.text);
        END`,
        `CREATE TRIGGER rag_chunks_ad AFTER DELETE ON rag_chunks BEGIN
          INSERT INTO rag_chunks_fts(rag_chunks_fts, rowid, text) VALUES ('delete', old.seq, old.text);
        END`,
      );
    }
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['rag_chunks_fts', 'rag_chunks', 'rag_documents', 'rag_user_versions', 'rag_settings']) {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
