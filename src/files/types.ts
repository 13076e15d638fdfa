/** Who a file or vector store belongs to: the account, and the end user when it is one's (else null). */
export interface Owner {
  accountId: string;
  userId: string | null;
}

export type FilePurpose = 'assistants' | 'user_data';

/** A stored file (OpenAI's Files API): its bytes are the `file_parts` rows of its id. */
export interface FileRecord extends Owner {
  id: string;
  filename: string;
  purpose: FilePurpose;
  /** The format pvai found from the first bytes and the name (one of the documents' formats). */
  contentType: string;
  bytes: number;
  createdAt: number;
}

/** A page of a listing: newest or oldest first, after an id. */
export interface ListPage {
  order: 'asc' | 'desc';
  limit: number;
  /** The last id of the previous page (resolved to its position by the store). */
  after?: string | undefined;
  before?: string | undefined;
}
