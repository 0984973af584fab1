/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/__tests__"],
  testMatch: ["**/*.test.ts"],
  // Types are checked once by `tsc --noEmit` (npm test runs it first); per-file type-checking here
  // would only repeat that work.
  transform: { "^.+\\.ts$": ["ts-jest", { diagnostics: false }] },
  testTimeout: 120000,
  // Longest suites first, so parallel workers end together (bin/test runs several).
  testSequencer: "<rootDir>/__tests__/support/longest-first.js",
};
