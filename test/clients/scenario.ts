/**
 * The script every stand-in model follows: tool calls to `run_python`, one after another, in one client
 * session. What the client hands back for each call is recorded as `Seen`: exactly what the model would
 * get as the tool result.
 */
export interface Step {
  /** Short name used in tables and assertions. */
  label: string;
  args: { code: string; timeout?: number; servers?: string[]; reset?: boolean };
}

/** What the client sent the model for one tool call, reduced to what a model can read. */
export interface Seen {
  label: string;
  /** Every text the model gets for this result, joined with newlines (JSON-wrapped where the client wraps it). */
  text: string;
  /** Images the model gets, as mime types. */
  images: string[];
  /** The client marked the result as an error (where its API has such a flag). */
  isError: boolean;
  /** The API-native block(s) the client sent back, for debugging and the report. */
  raw: unknown;
}

export const TABLE_SETUP =
  "import pandas as pd, numpy as np\nrng = np.random.default_rng(0)\n" +
  "df = pd.DataFrame({'id': range(1000), 'city': rng.choice(['Oslo', 'Lima', 'Pune', 'Kyiv'], 1000), 'temp': rng.normal(15, 8, 1000).round(1), 'rain_mm': rng.integers(0, 40, 1000)})";

/** The steps of the full scenario; `proxied` needs an upstream server named `memory`. */
export const STEPS: Step[] = [
  { label: "state-set", args: { code: "x = 41\nprint('x is set')" } },
  { label: "text", args: { code: "x + 1" } },
  { label: "error", args: { code: "def f():\n    return 1 / 0\nf()" } },
  {
    label: "image",
    args: {
      code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nplt.title('scripted plot')\nNone",
    },
  },
  { label: "table", args: { code: `${TABLE_SETUP}\ndf` } },
  {
    label: "file",
    args: {
      code: "import os\nos.makedirs('/tmp/outputs', exist_ok=True)\nopen('/tmp/outputs/report.csv', 'w').write('city,temp\\nOslo,4.5\\nLima,19.0\\n')\nprint('written')",
    },
  },
  {
    label: "proxied",
    args: {
      servers: ["memory"],
      code: "await mcp_memory.create_entities(entities=[{'name': 'Ada', 'entityType': 'person', 'observations': ['wrote the first program']}])\ng = await mcp_memory.read_graph()\n[e['name'] for e in g['entities']]",
    },
  },
  { label: "timeout", args: { code: "import time\ntime.sleep(30)", timeout: 1 } },
  { label: "after-timeout", args: { code: "x" } },
  {
    label: "kill",
    args: { code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)", timeout: 1 },
  },
  { label: "lost-state", args: { code: "x" } },
];

/** A tool named run_python, possibly prefixed by the client (`mcp__code-exec__run_python`, `mcp_code-exec_run_python`). */
export function isOurTool(name: string): boolean {
  return /(^|_)run_python$/.test(name);
}
