/**
 * How a word maps onto the entries of the word vectors: the whole word when it is an entry (one of
 * the frequent words, or a token of the model's vocabulary), otherwise the model's own WordPiece
 * split: the longest entry the word begins with, then the longest continuation piece ("##shot")
 * from where that one ends, and so on ("kubectl" -> kube ##ct ##l), as BERT's tokenizer does.
 * Accents are dropped first where the word has no entry of its own, as the uncased model's
 * tokenizer drops them ("café" -> cafe).
 */
import type { WordVectors } from "./word-vectors-format.ts";

/** Longer than any token of the model's vocabulary; whole words of any length are looked up above. */
const MAX_PIECE = 24;
const MARKS = /\p{M}/gu;

/** Entry ids (with a share each, summing to 1) that spell `word`; [] when some part has no piece. */
export function spell(wv: WordVectors, word: string): { id: number; share: number }[] {
  const whole = wv.index.get(word);
  if (whole !== undefined) return [{ id: whole, share: 1 }];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII test
  const s = /^[\x00-\x7f]*$/.test(word) ? word : word.normalize("NFD").replace(MARKS, "");
  if (s !== word) {
    const folded = wv.index.get(s);
    if (folded !== undefined) return [{ id: folded, share: 1 }];
  }
  const ids: number[] = [];
  for (let start = 0; start < s.length; ) {
    let end = Math.min(s.length, start + MAX_PIECE);
    let id: number | undefined;
    for (; end > start; end--) {
      id = wv.index.get(start === 0 ? s.slice(0, end) : `##${s.slice(start, end)}`);
      if (id !== undefined) break;
    }
    // The model's tokenizer makes such a word [UNK]: it says nothing about the word.
    if (id === undefined) return [];
    ids.push(id);
    start = end;
  }
  return ids.map((id) => ({ id, share: 1 / ids.length }));
}
