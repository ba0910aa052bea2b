declare module "*.py" {
  const source: string;
  export default source;
}

declare module "*.sh" {
  const source: string;
  export default source;
}
