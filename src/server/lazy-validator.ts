/**
 * The SDK server's JSON Schema validator, made on first use. The SDK builds an Ajv instance (its
 * meta-schemas and formats, ~5-10 ms) in every Server's constructor, on the way to the `initialize`
 * answer, though it only checks elicitation answers, which this bridge never asks for.
 */
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";

export function lazyJsonSchemaValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) };
}
