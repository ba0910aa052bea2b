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
