import { describe, expect, test } from "bun:test";
import { createSearchIndex, type ToolDoc } from "../../src/docs/search.ts";
import { Thesaurus, thesaurus } from "../../src/docs/search/thesaurus.ts";
import { tokenize } from "../../src/docs/search/tokenize.ts";

describe("the thesaurus of software requests", () => {
  const t = new Thesaurus(
    [
      "# comment, not a group",
      "popup, pop-up, dialog, modal",
      "confirmation popup, confirm dialog",
      "get rid of, delete, remove",
      "sign off, approve",
      "lonely",
      "",
    ].join("\n"),
  );

  test("groups of two or more phrases; a line of one is no group", () => {
    expect(t.size).toBe(4);
    expect(t.matches(["lonely"])).toEqual([]);
  });

  test("phrases are found by stems, longest first at each word, and each word may begin its own", () => {
    const m = t.matches(tokenize("a confirmation popup came up"));
    expect(m.map((x) => [x.start, x.end])).toEqual([
      [1, 3],
      [2, 3],
    ]);
    expect(m[0]!.others).toEqual([["confirm", "dialog"]]);
    // "up" is a stop word: "pop-up" is "pop".
    expect(m[1]!.others).toEqual([["pop"], ["dialog"], ["modal"]]);
    // Stop words belong to the phrase ("get rid of"); the others' stop words are left out.
    expect(t.matches(tokenize("get rid of it"))[0]).toEqual({ start: 0, end: 3, others: [["delete"], ["remove"]] });
    // A verb with its particle has the verb for its head (last): "approve" finds "sign off" by "sign".
    expect(t.matches(["approve"])[0]!.others).toEqual([["off", "sign"]]);
  });

  test("the built-in thesaurus parses: hundreds of groups", () => {
    expect(thesaurus().size).toBeGreaterThan(500);
  });
});

describe("requests in everyday words find tools named in the API's words (the built-in thesaurus)", () => {
  const docs: ToolDoc[] = [
    { server: "browser", name: "handle_dialog", description: "Handle a dialog: accept or dismiss it." },
    { server: "browser", name: "click", description: "Click an element on the page." },
    { server: "browser", name: "wait_for", description: "Wait for text to appear or for a time to pass." },
    { server: "browser", name: "network_requests", description: "List the network requests since the page loaded." },
    { server: "browser", name: "console_messages", description: "List the console messages of the page." },
    { server: "shop", name: "delete_item", description: "Delete an item from the catalog." },
  ];
  const idx = createSearchIndex(docs, { wordVectors: null });
  const top = (q: string) => idx.search(q)[0]?.name;

  test("words no tool uses find the tools by the thesaurus's other words", () => {
    expect(top("a popup came up on the page, accept it")).toBe("handle_dialog");
    expect(top("pause for 3 seconds on the page")).toBe("wait_for");
    expect(top("which xhr calls did the page make")).toBe("network_requests");
  });

  test("what a request passes in quotes does not say what it asks to do", () => {
    expect(top("a 'Delete item?' popup came up, accept it")).toBe("handle_dialog");
    const notes = createSearchIndex(
      [
        { server: "notes", name: "get-comment", description: "A comment on a page." },
        { server: "notes", name: "post-comment", description: "A comment on a page." },
      ],
      { wordVectors: null },
    );
    // "show" is in the comment to write, not in what the request asks.
    expect(notes.search("add a comment saying 'show me the logs first'")[0]!.name).toBe("post-comment");
  });
});
