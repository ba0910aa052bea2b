declare module "*.py" {
  const source: string;
  export default source;
}

declare module "*.sh" {
  const source: string;
  export default source;
}

/** A file imported `with { type: "file" }`: its path (inside a compiled binary, under /$bunfs). */
declare module "*.bin" {
  const path: string;
  export default path;
}

/** A text file imported `with { type: "file" }`: its path, as for *.bin. */
declare module "*.txt" {
  const path: string;
  export default path;
}
declare module "*.lock" {
  const source: string;
  export default source;
}
