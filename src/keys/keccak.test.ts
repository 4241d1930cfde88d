import { keccak_256 } from "@noble/hashes/sha3.js";
import fc from "fast-check";
import { type Hex, keccak256 } from "viem";
import { expect, it } from "vitest";
import { keccak256Bytes, keccak256OfHex, keccakIsNative } from "./keccak.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

it("hashes natively here: the package's linux-x64 binary ships in its tarball", () => {
  expect(process.platform === "linux" && process.arch === "x64" ? keccakIsNative() : true).toBe(true);
});

it("gives Keccak-256's known digests (the empty input; not SHA3-256's)", () => {
  expect(hex(keccak256Bytes(new Uint8Array()))).toBe(
    "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470",
  );
  expect(hex(keccak256Bytes(Buffer.from("abc")))).toBe(
    "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45",
  );
});

it("agrees with noble's keccak for any bytes, across block boundaries, as Buffer or a view into a larger array", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 700 }), fc.nat(16), (bytes, offset) => {
      const expected = hex(keccak_256(bytes));
      expect(hex(keccak256Bytes(Buffer.from(bytes)))).toBe(expected);
      // A Uint8Array that starts inside its buffer: only its own bytes are hashed.
      const larger = new Uint8Array(offset + bytes.length + 7).fill(0xaa);
      larger.set(bytes, offset);
      expect(hex(keccak256Bytes(larger.subarray(offset, offset + bytes.length)))).toBe(expected);
    }),
    { numRuns: 300 },
  );
});

it("a transaction hash from hex is viem's keccak256 of the same bytes", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
      const raw = `0x${hex(bytes)}` as Hex;
      expect(keccak256OfHex(raw)).toBe(keccak256(raw));
    }),
    { numRuns: 200 },
  );
});
