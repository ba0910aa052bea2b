import { describe, expect, test } from "bun:test";
import { valueSpans } from "../../src/docs/search/values.ts";

const spans = (q: string) => valueSpans(q).map((v) => [v.span, v.hints.join("|")]);

describe("values in a request", () => {
  test("file names, URLs, e-mail addresses and host:port are found whole", () => {
    expect(spans("rename docs/notes_old.md to docs/notes-2023.md")).toEqual([
      ["docs/notes_old.md", "file"],
      ["docs/notes-2023.md", "file"],
    ]);
    expect(spans("grab https://blog.example.com/post/42?x=1 for me")).toEqual([["https://blog.example.com/post/42?x=1", "url|link"]]);
    expect(spans("mail bob.smith@example.co.uk the notes")).toEqual([["bob.smith@example.co.uk", "email"]]);
    expect(spans("forward the pod to localhost:3000")).toEqual([["localhost:3000", "port"]]);
    expect(spans("what's inside ~/projects/blog/drafts? and ../notes/")).toEqual([
      ["~/projects/blog/drafts", "directory|path"],
      ["../notes/", "directory|path"],
    ]);
    // A repository, a branch, a fraction are not paths.
    expect(spans("merge feature/dark-mode in acme/webapp, 1/2 done")).toEqual([]);
  });

  test("each kind of value names the parameters that take it; quoted text names none", () => {
    const params = (q: string) => valueSpans(q).map((v) => v.params.join("|"));
    expect(params("what is at 40.7128, -74.0060")).toEqual(["latitude|longitude|lat|lng|lon|coordinates|location"]);
    expect(params("open report.txt")).toEqual(["file|path|filename|paths|files"]);
    expect(params("send 'hello there'")).toEqual([""]);
  });

  test("code: call expressions with nested parentheses and member chains, and backticks", () => {
    expect(spans("run print(sum(range(101))) please")).toEqual([["print(sum(range(101)))", "code"]]);
    expect(spans("evaluate document.querySelectorAll('img').length in the console")).toEqual([
      ["document.querySelectorAll('img').length", "code"],
    ]);
    expect(spans("what does `git reflog` show")).toEqual([["`git reflog`", "code"]]);
    // An unclosed parenthesis is prose, not code.
    expect(spans("list files (the big ones")).toEqual([]);
  });

  test("channels, mentions and emoji shortcodes; look-alikes are not values", () => {
    expect(spans("react with :tada: to @maria in #releases")).toEqual([
      ["#releases", "channel"],
      ["@maria", "user"],
      [":tada:", "emoji|reaction"],
    ]);
    // An issue number, C#, a time of day and an npm scope are none of these.
    expect(spans("fix issue #12 in the C# service at 10:30 using @types/node")).toEqual([]);
  });

  test("IP addresses, coordinates, bare host names and quoted text", () => {
    expect(spans("point api.example.com at 203.0.113.7 and add the A record")).toEqual([
      ["203.0.113.7", "ip"],
      ["api.example.com", "domain|url|website|site"],
    ]);
    expect(spans("house rules of airbnb.com/rooms/12345678?")).toEqual([["airbnb.com/rooms/12345678", "url|link"]]);
    expect(spans("what's the street address at 48.8584, 2.2945?")).toEqual([["48.8584, 2.2945", "latitude|longitude|coordinates"]]);
    // A host inside a URL or an e-mail address is part of it; a file name stays a file.
    expect(spans("mail bob@acme.io about https://x.org/a and main.rs")).toEqual([
      ["https://x.org/a", "url|link"],
      ["bob@acme.io", "email"],
      ["main.rs", "file"],
    ]);
    // Quoted text is a value without a kind; apostrophes are not quotes.
    expect(spans("the page popped up an 'are you sure?' box, accept it")).toEqual([["'are you sure?'", ""]]);
    expect(spans('search for \u201cbest ramen\u201d and "late night"')).toEqual([
      ["\u201cbest ramen\u201d", ""],
      ['"late night"', ""],
    ]);
    expect(spans("I don't know what it's doing")).toEqual([]);
  });

  test("a SQL statement is one value, to its line's end or its ';'; English that reads like SQL is not", () => {
    expect(spans("read only pls: SELECT count(*) FROM orders WHERE created_at > now() - interval '1 day'")).toEqual([
      ["SELECT count(*) FROM orders WHERE created_at > now() - interval '1 day'", "sql|query"],
    ]);
    expect(spans("run select * from users where id = 3; then tell me")).toEqual([["select * from users where id = 3;", "sql|query"]]);
    expect(spans("try select id, name from customers")).toEqual([["select id, name from customers", "sql|query"]]);
    expect(spans("UPDATE users SET plan = 'pro' WHERE id = 7")).toEqual([["UPDATE users SET plan = 'pro' WHERE id = 7", "sql|query"]]);
    expect(spans("select the first row from the table")).toEqual([]);
    expect(spans("delete from the list the old items")).toEqual([]);
  });

  test("a long hostile request is looked at only in its first 2,000 characters", () => {
    const spans = valueSpans(`${"~/a".repeat(50_000)} #late`);
    expect(spans.some((v) => v.span === "#late")).toBe(false);
  });
});
