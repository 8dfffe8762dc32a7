// A namespace import, not `{ Type }`: the `Type` object holds every builder, so the operator UI,
// which imports the descriptors, would bundle all of TypeBox (63 kB minified, measured) for the
// six builders these files call (6 kB).
import * as Type from '@sinclair/typebox';

/** What GET shows for a stored secret; sending it back keeps the stored value. */
export const SECRET_MASK = '********';

/** A union of string literals whose static type stays the literal union (not `string`). */
export const literals = <T extends readonly string[]>(values: T) =>
  Type.Union(values.map((v) => Type.Literal(v))) as unknown as Type.TUnion<Array<Type.TLiteral<T[number]>>>;

/** An input secret: never read back. */
export const Secret = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 1000,
    description: `${what} (write-only: reads show "${SECRET_MASK}"; send that back to keep the stored one)`,
  });

/** A secret as GET shows it. */
export const Masked = Type.String({ description: `"${SECRET_MASK}" when set; send it back unchanged to keep the stored value` });

/** The same, naming what is kept (`password`, `signing key`). */
export const maskedNamed = (what: string) =>
  Type.String({ description: `"${SECRET_MASK}" when set; send it back unchanged to keep the stored ${what}` });
