/** Small builders for the records operations answer, so their OpenAPI types read the same everywhere. */
import { type TSchema, Type } from "@sinclair/typebox";

/** A field that is null when the record has no value for it. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const HexString = (description: string) => Type.String({ pattern: "^0x[0-9a-fA-F]*$", description });
export const AddressString = (description: string) =>
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", description });
export const TxHashString = (description = "transaction hash") =>
  Type.String({ pattern: "^0x[0-9a-fA-F]{64}$", description });
export const Timestamp = (description: string) =>
  Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}T", description: `${description} (ISO 8601, UTC)` });
/** Token amounts and ids: decimal strings, since they pass 2^53. */
export const UintString = (description: string) => Type.String({ pattern: "^[0-9]+$", description });
