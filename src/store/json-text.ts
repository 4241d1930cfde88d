/** JSON for the store's text columns: bigints (amounts, chain ids in typed data) written as decimal text. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "bigint" ? inner.toString() : inner,
  );
}
