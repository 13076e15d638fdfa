export { bufferedRequest } from './buffered-request.js';
export {
  OpenAICompatibleProvider,
  type OpenAICompatibleSettings,
} from './openai-compatible-provider.js';
