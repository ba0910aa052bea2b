#!/usr/bin/env bun
/**
 * What a result costs the model, per output mode (o200k tokens): a 1000-row DataFrame as the last
 * expression, and the same frame printed in full for comparison.
 *   bun bench/result-tokens.ts [--engine podman]
 */
import { getEncoding } from "js-tiktoken";
import { parseArgs } from "node:util";
import { startBridge } from "../test/support/bridge.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { engine: { type: "string", default: "podman" } } });
const enc = getEncoding("o200k_base");
const setup =
  "import pandas as pd, numpy as np\nrng = np.random.default_rng(0)\ndf = pd.DataFrame({'id': range(1000), 'city': rng.choice(['Oslo', 'Lima', 'Pune', 'Kyiv'], 1000), 'temp': rng.normal(15, 8, 1000).round(1), 'rain_mm': rng.integers(0, 40, 1000)})";

for (const mode of ["compact", "toon", "json"]) {
  const b = await startBridge({ MCP_BRIDGE_RUNTIME: values.engine!, MCP_BRIDGE_OUTPUT_MODE: mode });
  await b.run(setup);
  const r = await b.run("df");
  const full = await b.run("print(df.to_string())");
  await b.close();
  const text = enc.encode(r.text).length;
  const structured = enc.encode(JSON.stringify(r.structured)).length;
  console.log(
    `${mode.padEnd(8)} 1000-row DataFrame as last expression: text ${text} tokens, structuredContent ${structured} tokens; printed in full (capped at 64 KiB): ${enc.encode(full.text).length} tokens`,
  );
}
process.exit(0);
