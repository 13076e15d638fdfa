/* tslint:disable */
/* eslint-disable */
export * from './AdminApi.js';
export * from './ChatApi.js';
export * from './CodeApi.js';
export * from './ContractApi.js';
export * from './ConversationsApi.js';
export * from './EmbeddingsApi.js';
export * from './FilesApi.js';
export * from './HealthApi.js';
export * from './LogsApi.js';
export * from './MCPApi.js';
export * from './MemoryApi.js';
export * from './ModelsApi.js';
export * from './RAGApi.js';
export * from './ResponsesApi.js';
export * from './SLAApi.js';
export * from './UsageApi.js';
export * from './UsersApi.js';
export * from './VectorStoresApi.js';
