/** Run a command to completion in tests and collect what it printed. */
export interface RunOutput {
  stdout: string;
  stderr: string;
  code: number;
}

/** Spawn argv with exactly `env` (nothing inherited) and wait for it. */
export async function run(argv: string[], opts: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}): Promise<RunOutput> {
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env ?? { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root" },
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}
