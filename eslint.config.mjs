import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "**/node_modules/**", ".cache/**", "jest.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { files: ["**/*.js", "**/*.mjs"], languageOptions: { globals: globals.node } },
  { files: ["**/*.js"], rules: { "@typescript-eslint/no-require-imports": "off" } },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
      "no-console": "off",
    },
  },
);
