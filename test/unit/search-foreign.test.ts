import { beforeAll, describe, expect, test } from "bun:test";
import { createSearchIndex, type ToolDoc } from "../../src/docs/search.ts";
import { ForeignWords, foldWord, loadForeignWords } from "../../src/docs/search/foreign.ts";

const GLOSSARY = [
  "# test glossary",
  "es\tel\t",
  "es\tpago\tpayment,pay",
  "es\treembolsar\trefund",
  "es\tdirección\taddress,direction",
  "de\tdie\t",
  "de\tlöschen\tdelete,remove",
  "de\tdatei\tfile",
  "pt\tde\t",
  "pt\tdê\tgive",
].join("\n");

describe("the glossary of requests in other languages", () => {
  test("words are folded (case, accents) and a request's language needs enough of its words", () => {
    const g = new ForeignWords(GLOSSARY);
    expect(g.size).toBe(9);
    expect(foldWord("Dirección")).toBe("direccion");
    expect(g.english("es", "DIRECCION")).toEqual(["address", "direction"]);
    expect(g.english("es", "el")).toEqual([]);
    expect(g.english("de", "pago")).toBeUndefined();
    // Words that differ by their accents keep their own senses.
    expect(g.english("pt", "de")).toEqual([]);
    expect(g.english("pt", "dê")).toEqual(["give"]);
    const english = (w: string) => ["why", "did", "the", "process", "die", "a", "b", "c", "read", "file"].includes(w);
    expect(g.language(["reembolsar", "el", "pago"], english)).toBe("es");
    expect(g.language(["die", "datei", "löschen"], english)).toBe("de");
    // Words that are English too are no evidence; fewer foreign words than English ones are not enough.
    expect(g.language(["why", "did", "the", "process", "die"], english)).toBeUndefined();
    expect(g.language(["el", "pago", "a", "b", "c"], english)).toBeUndefined();
  });

  test("a pronoun written onto a verb, and articles English knows only in names, say the language", () => {
    const g = new ForeignWords(["es\tlos\t", "es\tdel\t", "es\tmuestra\tshow", "es\tborrar\tdelete", "it\tmostra\tshow"].join("\n"));
    expect(g.english("es", "Muéstrame")).toEqual(["show"]);
    expect(g.english("es", "borrarlos")).toEqual(["delete"]);
    expect(g.english("it", "mostrami")).toEqual(["show"]);
    // The pronoun comes off only where a verb of the glossary is left.
    expect(g.english("es", "me")).toBeUndefined();
    // "los" and "del" are English words to the word list (Los Angeles, Del Mar), but not English articles.
    const english = (w: string) => ["los", "del", "pods", "namespace", "staging", "the"].includes(w);
    expect(g.language(["muéstrame", "los", "pods", "del", "namespace", "staging"], english)).toBe("es");
    expect(g.language(["show", "the", "pods", "del", "namespace"], english)).toBeUndefined();
  });

  test("malformed lines are skipped", () => {
    const g = new ForeignWords("es\tsolo\nnot a line\n\tx\ty\nes\tok\tfine,Not Ascii,two words,x2\n");
    expect(g.size).toBe(1);
    expect(g.english("es", "ok")).toEqual(["fine"]);
  });
});

describe("requests in Spanish, German, French... find tools described in English (the built-in glossary)", () => {
  const docs: ToolDoc[] = [
    { server: "pay", name: "create_refund", description: "Refund a charge to the customer." },
    { server: "pay", name: "list_payments", description: "List payments." },
    { server: "pay", name: "create_payment_link", description: "Create a payment link." },
    { server: "fs", name: "delete_file", description: "Delete a file." },
    { server: "fs", name: "read_file", description: "Read a file." },
    { server: "maps", name: "elevation", description: "Elevation of a point above sea level." },
    { server: "maps", name: "geocode", description: "Address to coordinates." },
    { server: "mq", name: "queue_put", description: "Put a message on a queue." },
    { server: "pay", name: "retrieve_balance", description: "Retrieve the balance." },
  ];
  beforeAll(async () => {
    await loadForeignWords();
  });

  test("Spanish, German, French and Portuguese requests", () => {
    const idx = createSearchIndex(docs, { wordVectors: null });
    expect(idx.search("¿Puedes reembolsar el pago que hizo el cliente?")[0]!.name).toBe("create_refund");
    expect(idx.search("Bitte lösche die Datei notes.txt")[0]!.name).toBe("delete_file");
    expect(idx.search("supprime le fichier notes.txt s'il te plaît")[0]!.name).toBe("delete_file");
    // A question for a quantity, in the request's language: "cuánto" is "how much", a balance or a cost.
    expect(idx.search("¿Cuánto dinero tenemos?")[0]!.name).toBe("retrieve_balance");
    expect(idx.search("Qual é a altitude deste ponto acima do nível do mar?")[0]!.name).toBe("elevation");
    // Pronouns on the verb ("muéstramelos": show them to me), in the glossary or not.
    expect(idx.search("Muéstramelos, los ficheros notes.txt y todo.txt")[0]!.name).toBe("read_file");
  });

  test("an English request is searched as written", () => {
    const idx = createSearchIndex(docs, { wordVectors: null });
    expect(idx.search("read the file notes.txt")[0]!.name).toBe("read_file");
    expect(idx.search("list the payments")[0]!.name).toBe("list_payments");
    // "a" and "file" are French words too (has, queue): not translated.
    expect(idx.search("write a file")[0]!.server).toBe("fs");
  });

  test("what a foreign request asks to do counts as an English one's would (read or change)", () => {
    const idx = createSearchIndex(
      [
        { server: "notes", name: "get-comment", description: "A comment on a page." },
        { server: "notes", name: "post-comment", description: "A comment on a page." },
      ],
      { wordVectors: null },
    );
    expect(idx.search("añade un comentario en la página")[0]!.name).toBe("post-comment");
  });
});
