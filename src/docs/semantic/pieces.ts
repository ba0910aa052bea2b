/**
 * How a word maps onto the entries of the word vectors: the whole word when it is known, otherwise
 * the most probable spelling from SentencePiece pieces ("screenshot" -> ▁screen ##shot), found by
 * Viterbi over the pieces' unigram log-probabilities, as SentencePiece itself does.
 */
import type { WordVectors } from "./word-vectors-format.ts";

const MAX_PIECE = 16;
/** Log-probability charged for a character no piece covers. */
const UNKNOWN_LOGP = -20;

/** Entry ids (with a share each, summing to 1) that spell `word`; [] when nothing fits. */
export function spell(wv: WordVectors, word: string): { id: number; share: number }[] {
  const whole = wv.index.get(word);
  if (whole !== undefined && Number.isNaN(wv.logp[whole]!)) return [{ id: whole, share: 1 }];
  const s = "\u2581" + word;
  const n = s.length;
  const best = new Float64Array(n + 1).fill(Number.NEGATIVE_INFINITY);
  const from = new Int32Array(n + 1).fill(-1);
  const piece = new Int32Array(n + 1).fill(-1);
  best[0] = 0;
  for (let end = 1; end <= n; end++) {
    for (let start = Math.max(0, end - MAX_PIECE); start < end; start++) {
      if (best[start] === Number.NEGATIVE_INFINITY) continue;
      const key = start === 0 ? s.slice(0, end) : "##" + s.slice(start, end);
      const id = wv.index.get(key);
      const lp = id === undefined ? (end - start === 1 ? UNKNOWN_LOGP : Number.NEGATIVE_INFINITY) : wv.logp[id]!;
      if (Number.isNaN(lp) || lp === Number.NEGATIVE_INFINITY) continue;
      const score = best[start]! + lp;
      if (score > best[end]!) {
        best[end] = score;
        from[end] = start;
        piece[end] = id ?? -1;
      }
    }
  }
  const ids: number[] = [];
  for (let end = n; end > 0 && from[end]! >= 0; end = from[end]!) if (piece[end]! >= 0) ids.push(piece[end]!);
  // "▁" alone says nothing about the word.
  const kept = ids.filter((id) => wv.keys[id] !== "\u2581");
  return kept.reverse().map((id) => ({ id, share: 1 / kept.length }));
}
