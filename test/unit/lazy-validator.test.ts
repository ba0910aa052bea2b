/** The SDK server's validator made on first use still validates like the SDK's own (Ajv). */
import { expect, test } from "bun:test";
import { lazyJsonSchemaValidator } from "../../src/server/lazy-validator.ts";

test("validates against a schema on first use, and keeps doing so", () => {
  const v = lazyJsonSchemaValidator();
  const check = v.getValidator<{ n: number }>({ type: "object", properties: { n: { type: "integer" } }, required: ["n"] });
  expect(check({ n: 3 }).valid).toBe(true);
  const bad = check({ n: "x" });
  expect(bad.valid).toBe(false);
  expect(bad.errorMessage).toContain("integer");
  expect(v.getValidator({ type: "string" })("s").valid).toBe(true);
});
