export { bufferedRequest } from './buffered-request.js';
export {
  OPENAI_COMPATIBLE_DEFAULTS,
  OpenAICompatibleProvider,
  type OpenAICompatibleSettings,
} from './openai-compatible-provider.js';
export { parseSseData } from './sse-parser.js';
