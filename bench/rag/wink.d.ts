// The wink packages ship no types; only what the benchmark calls is declared.
declare module 'wink-bm25-text-search' {
  interface Engine {
    defineConfig(config: {
      fldWeights: Record<string, number>;
      bm25Params?: { k1?: number; b?: number; k?: number };
    }): void;
    definePrepTasks(tasks: Array<(input: never) => unknown>, field?: string): number;
    addDoc(doc: Record<string, string>, id: string | number): number;
    consolidate(fp?: number): void;
    search(text: string, limit?: number): Array<[string, number]>;
  }
  const bm25: () => Engine;
  export default bm25;
}

declare module 'wink-nlp-utils' {
  const nlp: {
    string: {
      lowerCase(s: string): string;
      tokenize0(s: string): string[];
      stem(word: string): string;
    };
    tokens: {
      removeWords(tokens: string[]): string[];
      stem(tokens: string[]): string[];
      propagateNegations(tokens: string[]): string[];
    };
  };
  export default nlp;
}
