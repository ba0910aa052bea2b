import { describe, expect, test } from "bun:test";
import { createSearchIndex } from "../../src/docs/search.ts";
import { askedQuantities, phrasalVerbs } from "../../src/docs/search/phrasal.ts";
import { tokenize } from "../../src/docs/search/tokenize.ts";

const found = (q: string) => phrasalVerbs(tokenize(q)).map((p) => p.means[0]);

describe("phrasal verbs", () => {
  test("a verb and its particle, with a pronoun or two between, in any tense", () => {
    expect(found("can you bring it back?")).toEqual(["restore"]);
    expect(found("turn everything off")).toEqual(["stop"]);
    expect(found("I went back to the old version")).toEqual(["revert"]);
    expect(found("tore down the staging stack")).toEqual(["delete"]);
    // A content word between them breaks the pair; so does a particle that is not this verb's.
    expect(found("bring the old laptop back")).toEqual([]);
    expect(found("bring up the logs")).toEqual([]);
  });

  test("the tool named by the one-word verb ranks first; the particle still counts where a tool has it", () => {
    const idx = createSearchIndex(
      [
        { server: "db", name: "pause_project", description: "Pauses a project." },
        { server: "db", name: "restore_project", description: "Restores a project." },
        { server: "db", name: "get_project", description: "Gets a project." },
        { server: "do", name: "power-off-droplet", description: "Power off a droplet." },
        { server: "do", name: "disable-backups-droplet", description: "Disable backups of a droplet." },
      ],
      { wordVectors: null },
    );
    expect(idx.search("bring back my project please")[0]!.name).toBe("restore_project");
    expect(idx.search("the project, can you bring it back?")[0]!.name).toBe("restore_project");
    expect(idx.search("turn off the droplet")[0]!.name).toBe("power-off-droplet");
  });
});

describe("questions that ask for a quantity", () => {
  test("'how much', 'how far', 'how high' name the quantity", () => {
    expect(askedQuantities(tokenize("How much is in the account?"))).toEqual([["cost", "price", "balance", "amount", "total"]]);
    expect(askedQuantities(tokenize("how far is it, and how high?")).map((q) => q[0])).toEqual(["distance", "height"]);
    expect(askedQuantities(tokenize("show me how it works"))).toEqual([]);
  });

  test("the tool that gives the quantity ranks first", () => {
    const idx = createSearchIndex(
      [
        { server: "pay", name: "account_coupons", description: "Coupons of the account." },
        { server: "pay", name: "retrieve_balance", description: "Retrieve the balance of the account." },
        { server: "maps", name: "elevation", description: "Elevation of a point." },
        { server: "maps", name: "describe_point", description: "Coordinates of a point." },
      ],
      { wordVectors: null },
    );
    expect(idx.search("how much money is sitting in our account")[0]!.name).toBe("retrieve_balance");
    expect(idx.search("how high above the sea is this point")[0]!.name).toBe("elevation");
  });
});
