// jest's globals (describe, it, expect) for the tests beside the code (src/**/*.test.ts) and here.
// A reference, not tsconfig.json's `types`: tsconfig.json ships in the npm package, where there is no
// @types/jest, and this file does not.
/// <reference types="jest" />
