/** See build-if-stale.js. Why dist/ must be rebuilt, or undefined when it was built from exactly these sources. */
export function staleReason(root: string): string | undefined;
/** Records the digest of the sources dist/ was built from (dist/build-stamp.json). */
export function recordBuild(root: string): void;
/** sha256 over the relative paths and contents of src/ and provider/ (no tests) and tsconfig.json. */
export function sourceDigest(root: string): string;
