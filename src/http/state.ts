import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Principal } from '../kernel/index.js';
import type { ReadBody } from './body.js';
import type { Upload } from './multipart.js';
import type { UsageNote } from './operation.js';

export interface RequestState {
  requestId: string;
  startedAt: number;
  log: Logger;
  operationId?: string;
  principal?: Principal;
  usage: UsageNote;
  /** The request body, read and parsed by the body reader (absent for requests without one). */
  body?: ReadBody;
  /** Set by streamed responses: settles when the stream has ended, with the final token counts noted. */
  streamDone?: Promise<void>;
  /** The stream was cut because its client stopped reading (its usage row records STREAM_STALLED). */
  streamStalled?: true;
  /** A multipart/form-data body, for operations whose contract accepts one. */
  upload?: Upload;
}

export type AppContext = Koa.ParameterizedContext<RequestState>;
