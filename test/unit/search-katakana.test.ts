import { describe, expect, test } from "bun:test";
import { createSearchIndex, type ToolDoc } from "../../src/docs/search.ts";
import { loanwordIndex, loanwords, romanize, soundKey } from "../../src/docs/search/katakana.ts";

describe("katakana loanwords are found among the tools' English words by sound", () => {
  test("romanization: long vowels, doubled consonants, small kana", () => {
    expect(romanize("タスク")).toBe("tasuku");
    expect(romanize("コミット")).toBe("komitto");
    expect(romanize("サーバー")).toBe("saabaa");
    expect(romanize("ファイル")).toBe("fairu");
    expect(romanize("チャンネル")).toBe("channeru");
    expect(romanize("ウィンドウ")).toBe("windou");
    expect(romanize("ティッカー")).toBe("tikkaa");
  });

  test("English and katakana spellings of one word share a key", () => {
    for (const [kana, english] of [
      ["スクリーンショット", "screenshot"],
      ["データベース", "database"],
      ["ブランチ", "branch"],
      ["メッセージ", "message"],
      ["ブラウザ", "browser"],
      ["エクスポート", "export"],
      ["ファンクション", "function"],
      ["グラフ", "graph"],
    ] as const)
      expect(soundKey(romanize(kana), false)).toBe(soundKey(english, true));
  });

  const vocab = loanwordIndex(
    "task subtask server save serve branch repository pull poll request perplexity commit delete log large screenshot user".split(" "),
  );
  const found = (q: string) => loanwords(q, vocab).map((l) => l.words.map((c) => c[0]));

  test("the closest spelling comes first; look-alikes spelt too differently are not matches", () => {
    expect(loanwords("サーバー", vocab)[0]!.words[0]![0]).toBe("server");
    expect(found("リポジトリ")).toEqual([["repository"]]);
    // "pururikuesuto" has perplexity's consonants but not its spelling; as two words it is pull + request.
    expect(found("プルリクエスト")).toEqual([["pull", "request"]]);
    expect(found("タスク12を細かいサブタスクに分けて")).toEqual([["task"], ["subtask"]]);
    // One consonant sound (ユーザー "user") is too ambiguous to look up.
    expect(found("ユーザー")).toEqual([]);
  });

  test("a Japanese request finds the English tool its loanwords name", () => {
    const docs: ToolDoc[] = [
      { server: "git", name: "delete_branch", description: "Delete a branch." },
      { server: "git", name: "create_commit", description: "Record changes as a commit." },
      { server: "browser", name: "take_screenshot", description: "Capture the page as an image." },
      { server: "db", name: "list_tables", description: "Tables of the database." },
    ];
    const idx = createSearchIndex(docs, { wordVectors: null });
    expect(idx.search("このブランチを消して")[0]!.name).toBe("delete_branch");
    expect(idx.search("スクリーンショットを撮って")[0]!.name).toBe("take_screenshot");
    expect(idx.search("データベースのテーブルを見せて")[0]!.name).toBe("list_tables");
  });
});
