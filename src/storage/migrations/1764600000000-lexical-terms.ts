import type { MigrationInterface, QueryRunner } from 'typeorm';
import { encodeTerms } from '../../text/index.js';

/** Rows analysed per round trip while back-filling (a large index is not read into memory at once). */
const PAGE = 1000;

/**
 * Lexical search moves from FTS5 (SQLite) and tsvector (PostgreSQL) to BM25 over each chunk's analysed
 * terms, held in memory per tenant (now src/retrieval/sql/lexical-set.ts): FTS5's bm25() took 144 ms p50 at 100k
 * chunks, and ts_rank_cd ranked 10 % worse than BM25 on Cranfield (docs/decisions.md). Each indexed
 * chunk gains `terms`, back-filled from its text (a document chunk's in rag_chunks, a memory's in
 * memories); the FTS5 table and the tsvector column with its GIN index go.
 */
export class LexicalTerms1764600000000 implements MigrationInterface {
  name = 'LexicalTerms1764600000000';

  async up(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    await runner.query("ALTER TABLE rag_index_chunks ADD COLUMN terms TEXT NOT NULL DEFAULT ''");
    let after = 0;
    for (;;) {
      const rows: Array<{ seq: number | string; text: string | null }> = await runner.query(
        `SELECT i.seq, COALESCE(c.text, m.content) AS text FROM rag_index_chunks i
         LEFT JOIN rag_chunks c ON c.id = i.chunk_id AND c.account_id = i.account_id AND c.user_id = i.user_id
         LEFT JOIN memories m ON m.id = i.chunk_id AND m.account_id || '#memory' = i.account_id
           AND m.user_id = i.user_id
         WHERE i.seq > ${pg ? '$1' : '?'} ORDER BY i.seq LIMIT ${PAGE}`,
        [after],
      );
      for (const row of rows) {
        if (row.text) {
          await runner.query(`UPDATE rag_index_chunks SET terms = ${pg ? '$1' : '?'} WHERE seq = ${pg ? '$2' : '?'}`, [
            encodeTerms(row.text),
            row.seq,
          ]);
        }
      }
      if (rows.length < PAGE) break;
      after = Number(rows.at(-1)?.seq);
    }
    if (pg) {
      await runner.query('DROP INDEX IF EXISTS rag_index_chunks_tsv');
      await runner.query('ALTER TABLE rag_index_chunks DROP COLUMN tsv');
    } else {
      await runner.query('DROP TABLE IF EXISTS rag_index_fts');
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    // Back to the previous lexical index, rebuilt from the same texts.
    const text = `SELECT COALESCE(c.text, m.content, '') FROM rag_index_chunks i2
      LEFT JOIN rag_chunks c ON c.id = i2.chunk_id AND c.account_id = i2.account_id AND c.user_id = i2.user_id
      LEFT JOIN memories m ON m.id = i2.chunk_id AND m.account_id || '#memory' = i2.account_id
        AND m.user_id = i2.user_id
      WHERE i2.seq = rag_index_chunks.seq`;
    if (pg) {
      await runner.query("ALTER TABLE rag_index_chunks ADD COLUMN tsv tsvector NOT NULL DEFAULT ''::tsvector");
      await runner.query(`UPDATE rag_index_chunks SET tsv = to_tsvector('english', (${text}))`);
      await runner.query('CREATE INDEX rag_index_chunks_tsv ON rag_index_chunks USING GIN (tsv)');
    } else {
      await runner.query(
        `CREATE VIRTUAL TABLE rag_index_fts USING fts5(text, content='', contentless_delete=1,
          tokenize='porter unicode61 remove_diacritics 2')`,
      );
      await runner.query(`INSERT INTO rag_index_fts (rowid, text) SELECT seq, (${text}) FROM rag_index_chunks`);
    }
    await runner.query('ALTER TABLE rag_index_chunks DROP COLUMN terms');
  }
}
