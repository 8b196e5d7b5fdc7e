/** See build-if-stale.js: the shipped sources of src/ and provider/ whose compiled module in dist/ is missing or older. */
export function staleSources(root: string): string[];
