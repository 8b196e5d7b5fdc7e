/**
 * Text from the data into the page, safely: every name, reason and command a node or device can
 * carry (a label, a filesystem label, an lvm message) goes through one of these two.
 */

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` as HTML text or a quoted attribute value: `<script>` shows as written and runs nothing. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/**
 * `value` as JSON to put inside `<script type="application/json">`: every `<` written as `\u003c`
 * (so no `</script>` or `<!--` in the data ends or changes the element), and the two line
 * separators JavaScript once did not allow in strings escaped too. JSON.parse reads it back as is.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
