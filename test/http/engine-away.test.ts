import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError, asAppError, EngineAwayError, engineAwayOf } from '../../src/errors/index.js';

/** An error as node-postgres builds it from a server's ErrorResponse. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

/** A system error as Node's net module throws it. */
function netError(code: string, syscall = 'connect'): Error {
  return Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, syscall });
}

describe('which failures mean an engine could not be asked', () => {
  it('recognises a database that is not there, going away or coming back', () => {
    assert.equal(engineAwayOf(netError('ECONNREFUSED')), 'database');
    assert.equal(engineAwayOf(netError('ECONNRESET', 'read')), 'database');
    assert.equal(engineAwayOf(pgError('57P01', 'terminating connection due to administrator command')), 'database');
    assert.equal(engineAwayOf(pgError('57P03', 'the database system is starting up')), 'database');
    assert.equal(engineAwayOf(pgError('53300', 'sorry, too many clients already')), 'database');
    assert.equal(engineAwayOf(new Error('Connection terminated unexpectedly')), 'database');
    assert.equal(engineAwayOf(netError('ENOENT')), 'database', 'a Unix socket that is not there');
    assert.equal(engineAwayOf(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })), 'database');
  });

  it('looks through the wrappers drivers and ORMs put around it', () => {
    const typeorm = Object.assign(new Error('QueryFailedError'), { driverError: netError('ECONNREFUSED') });
    assert.equal(engineAwayOf(typeorm), 'database');
    assert.equal(engineAwayOf(new AggregateError([netError('ECONNREFUSED'), netError('ECONNREFUSED')])), 'database');
    assert.equal(engineAwayOf(new Error('wrapped', { cause: pgError('57P01', 'shutting down') })), 'database');
    assert.equal(engineAwayOf(new EngineAwayError('vector index', 'qdrant is away')), 'vector index');
  });

  it('leaves refusals, constraints, missing files and bugs alone', () => {
    assert.equal(
      engineAwayOf(Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' })),
      undefined,
    );
    assert.equal(engineAwayOf(Object.assign(new Error('syntax'), { code: '42601', severity: 'ERROR' })), undefined);
    assert.equal(engineAwayOf(netError('ENOENT', 'open')), undefined);
    assert.equal(engineAwayOf(new TypeError('x is undefined')), undefined);
    assert.equal(engineAwayOf(new AppError('NOT_FOUND', 'no such thing')), undefined);
    assert.equal(engineAwayOf(undefined), undefined);
  });

  it('answers an absent engine 503 with Retry-After and the engine, anything unknown 500', () => {
    const away = asAppError(netError('ECONNREFUSED'));
    assert.equal(away.status, 503);
    assert.equal(away.code, 'SERVICE_UNAVAILABLE');
    assert.deepEqual(away.details, { engine: 'database' });
    assert.equal(away.headers['Retry-After'], '1');
    assert.equal(asAppError(new TypeError('bug')).code, 'INTERNAL_ERROR');
    const own = new AppError('CONFLICT', 'taken');
    assert.equal(asAppError(own), own);
  });
});
