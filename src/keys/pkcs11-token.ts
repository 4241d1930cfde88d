/** One PKCS#11 token (an HSM; SoftHSM2 in CI): secp256k1 keys made on it and found by label or id, hashes signed by a pool of logged-in sessions within a bounded time, reconnecting by itself. */
import { readFileSync, statSync } from "node:fs";
import pkcs11js from "pkcs11js";
import { bytesToHex, type Hex, keccak256 } from "viem";
import { ChaingateError } from "../errors/chaingate-error.js";

export interface Pkcs11Options {
  /** The module's path (libsofthsm2.so, a vendor's library). */
  module: string;
  /** The token's label. */
  token: string;
  /** A file holding the user PIN: read at each login, never kept in config, never logged. */
  pinFile: string;
  /** The longest one token call may take before it counts as hung. */
  timeoutMs: number;
  /** Sessions signing at once (what the token allows). */
  sessions: number;
}

/** A key pair on the token: its CKA_ID (hex), label, and uncompressed public key. */
export interface TokenKey {
  id: string;
  label: string;
  publicKey: Hex;
  address: Hex;
}

/** secp256k1's OID (1.3.132.0.10), DER-encoded, as CKA_EC_PARAMS. */
const SECP256K1 = Buffer.from("06052b8104000a", "hex");

const unavailable = (detail: string, cause?: unknown) =>
  new ChaingateError(`HSM unavailable: ${detail}`, { code: "HSM_UNAVAILABLE", cause });

/** The uncompressed point from CKA_EC_POINT (a DER OCTET STRING around 0x04‖X‖Y, or the point itself). */
function pointOf(value: Buffer): Buffer {
  if (value.length === 65 && value[0] === 4) return value;
  if (value[0] === 0x04 && value.length > 65 && value[2] === 0x04) return value.subarray(2, 67);
  if (value[0] === 0x04 && value[1] === 0x81 && value[3] === 0x04) return value.subarray(3, 68);
  throw unavailable("the token answered a public key that is not an uncompressed secp256k1 point");
}

const addressOf = (point: Buffer): Hex => `0x${keccak256(point.subarray(1)).slice(26)}`;

/** The PKCS#11 return value's name in an error (pkcs11js puts it in the message: "CKR_PIN_INCORRECT:160"). */
const ckr = (error: unknown) => /CKR_[A-Z_]+/.exec(String((error as Error)?.message ?? error))?.[0];

export class Pkcs11Token {
  private lib: pkcs11js.PKCS11 | undefined;
  private idle: Buffer[] = [];
  /** Calls waiting for a session; handed undefined when the module's state is dropped (they start again). */
  private queue: ((session: Buffer | undefined) => void)[] = [];
  private readonly handles = new Map<string, Buffer>();
  /** Why the token is not usable now (for /readyz), or undefined when it is. */
  problem: string | undefined = "not opened yet";
  private opening: Promise<void> | undefined;
  /** The PIN file's write time when the token last refused its PIN, and that refusal. */
  private refusedPin: { written: number; error: ChaingateError } | undefined;

  constructor(readonly options: Pkcs11Options) {}

  /** Loads the module, finds the token, opens the sessions and logs in; safe to call again to reconnect. */
  open(): Promise<void> {
    this.opening ??= this.connect().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async connect(): Promise<void> {
    this.drop();
    const { module, token, sessions } = this.options;
    const lib = new pkcs11js.PKCS11();
    try {
      lib.load(module);
      try {
        // Signatures run on libuv's threads, one session each at a time: the module must lock
        // itself (with no arguments it may assume one thread, and SoftHSM2 then corrupts its heap).
        lib.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
      } catch (error) {
        // Another user of the module in this process (a second token, a tool) initialized it.
        if (ckr(error) !== "CKR_CRYPTOKI_ALREADY_INITIALIZED") throw error;
      }
    } catch (error) {
      this.problem = `the PKCS#11 module ${module} did not load (${ckr(error) ?? (error as Error).message})`;
      throw unavailable(this.problem, error);
    }
    try {
      const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === token);
      if (slot === undefined) throw unavailable(`no token labelled "${token}" is present`);
      const opened = Array.from({ length: Math.max(1, sessions) }, () =>
        lib.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION),
      );
      let pin: string;
      let written: number;
      try {
        written = statSync(this.options.pinFile).mtimeMs;
        pin = readFileSync(this.options.pinFile, "utf8").trim();
      } catch (error) {
        throw unavailable(`the PIN file ${this.options.pinFile} cannot be read`, error);
      }
      // A PIN the token refused is not tried again until the file changes: HSMs lock after a few.
      if (this.refusedPin !== undefined && this.refusedPin.written === written) throw this.refusedPin.error;
      try {
        lib.C_Login(opened[0]!, pkcs11js.CKU_USER, pin);
        this.refusedPin = undefined;
      } catch (error) {
        if (ckr(error) !== "CKR_USER_ALREADY_LOGGED_IN") {
          const code = ckr(error);
          if (code === "CKR_PIN_INCORRECT" || code === "CKR_PIN_LOCKED" || code === "CKR_PIN_LEN_RANGE") {
            const refused = new ChaingateError(
              `HSM login failed: the token refused the PIN in ${this.options.pinFile} (${code}); it is tried again when the file changes`,
              { code: "HSM_LOGIN_FAILED" },
            );
            this.refusedPin = { written, error: refused };
            throw refused;
          }
          throw unavailable(`login failed (${code ?? (error as Error).message})`, error);
        }
      }
      this.lib = lib;
      this.idle = opened;
      this.problem = undefined;
    } catch (error) {
      this.problem = (error as Error).message;
      try {
        lib.C_Finalize();
      } catch {
        // Already gone with the token.
      }
      throw error;
    }
  }

  /** Forgets the module's state (sessions, cached handles): the next call opens it again. */
  private drop(): void {
    const lib = this.lib;
    this.lib = undefined;
    this.idle = [];
    this.handles.clear();
    // Their sessions are gone with the module's state: each asks again (and opens it, or is told why not).
    for (const waiter of this.queue.splice(0)) waiter(undefined);
    if (lib)
      try {
        lib.C_Finalize();
      } catch {
        // A removed token or a crashed module: nothing to close.
      }
  }

  close(): void {
    this.drop();
    this.problem = "closed";
  }

  /** Runs `work` on an idle session (waiting for one), reconnecting once when the token was lost. */
  private async withSession<T>(work: (lib: pkcs11js.PKCS11, session: Buffer) => Promise<T> | T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.lib === undefined) await this.open();
      const lib = this.lib!;
      const session =
        this.idle.pop() ?? (await new Promise<Buffer | undefined>((resolve) => this.queue.push(resolve)));
      if (session === undefined) {
        // The token was dropped while this call waited: it has not been tried yet.
        attempt--;
        if (this.problem === "closed") throw unavailable("the token was closed");
        continue;
      }
      let timer: NodeJS.Timeout | undefined;
      try {
        const result = await Promise.race([
          Promise.resolve().then(() => work(lib, session)),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(unavailable(`the token did not answer within ${this.options.timeoutMs} ms`)),
              this.options.timeoutMs,
            );
          }),
        ]);
        this.release(lib, session);
        return result;
      } catch (error) {
        const code = ckr(error);
        // Lost: the token went away, hung or closed its sessions. Anything else (a key not found,
        // a mechanism refused) is an answer, and the token stays as it is.
        const hung = error instanceof ChaingateError && error.code === "HSM_UNAVAILABLE";
        const lost =
          hung ||
          (code !== undefined &&
            /SESSION|TOKEN_NOT_PRESENT|DEVICE|NOT_LOGGED_IN|CRYPTOKI_NOT_INITIALIZED|GENERAL_ERROR|HANDLE_INVALID/.test(
              code,
            ));
        if (!lost) {
          this.release(lib, session);
          throw error;
        }
        // The token went away, hung or closed its sessions: start afresh (once), then say so.
        this.problem = error instanceof ChaingateError ? error.message : `the token answered ${code}`;
        if (this.lib === lib) this.drop();
        if (attempt > 0 || hung)
          throw error instanceof ChaingateError ? error : unavailable(this.problem, error);
      } finally {
        clearTimeout(timer);
      }
    }
  }

  private release(lib: pkcs11js.PKCS11, session: Buffer): void {
    if (this.lib !== lib) return;
    const next = this.queue.shift();
    if (next) next(session);
    else this.idle.push(session);
  }

  /** A new secp256k1 key pair on the token: private key sensitive, not extractable, kept on the token. */
  generate(label: string): Promise<TokenKey> {
    return this.withSession((lib, session) => {
      const id = Buffer.from(
        keccak256(Buffer.from(`${label}:${Date.now()}:${Math.random()}`)).slice(2, 34),
        "hex",
      );
      const common = [
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_ID, value: id },
        { type: pkcs11js.CKA_LABEL, value: label },
      ];
      const pair = lib.C_GenerateKeyPair(
        session,
        { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
        [
          ...common,
          { type: pkcs11js.CKA_EC_PARAMS, value: SECP256K1 },
          { type: pkcs11js.CKA_VERIFY, value: true },
        ],
        [
          ...common,
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_SIGN, value: true },
          { type: pkcs11js.CKA_SENSITIVE, value: true },
          { type: pkcs11js.CKA_EXTRACTABLE, value: false },
        ],
      );
      const [point] = lib.C_GetAttributeValue(session, pair.publicKey, [{ type: pkcs11js.CKA_EC_POINT }]);
      const publicKey = pointOf(point!.value as Buffer);
      this.handles.set(id.toString("hex"), pair.privateKey);
      return {
        id: id.toString("hex"),
        label,
        publicKey: bytesToHex(publicKey),
        address: addressOf(publicKey),
      };
    });
  }

  /** A secp256k1 key pair already on the token, by its label or its id (hex). */
  find(labelOrId: string): Promise<TokenKey> {
    return this.withSession((lib, session) => {
      const byId = /^(0x)?[0-9a-fA-F]+$/.test(labelOrId)
        ? Buffer.from(labelOrId.replace(/^0x/, ""), "hex")
        : undefined;
      const template = [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
        byId ? { type: pkcs11js.CKA_ID, value: byId } : { type: pkcs11js.CKA_LABEL, value: labelOrId },
      ];
      lib.C_FindObjectsInit(session, template);
      const found = lib.C_FindObjects(session, 2);
      lib.C_FindObjectsFinal(session);
      if (found.length !== 1)
        throw new ChaingateError(
          found.length === 0
            ? `no key labelled or identified "${labelOrId}" on token "${this.options.token}"`
            : `more than one key labelled "${labelOrId}" on token "${this.options.token}": adopt it by id`,
          { code: "HSM_KEY_NOT_FOUND" },
        );
      const [point, id, label, params] = lib.C_GetAttributeValue(session, found[0]!, [
        { type: pkcs11js.CKA_EC_POINT },
        { type: pkcs11js.CKA_ID },
        { type: pkcs11js.CKA_LABEL },
        { type: pkcs11js.CKA_EC_PARAMS },
      ]);
      if (!(params!.value as Buffer).equals(SECP256K1))
        throw new ChaingateError(`the key "${labelOrId}" is not a secp256k1 key`, {
          code: "HSM_KEY_NOT_FOUND",
        });
      const publicKey = pointOf(point!.value as Buffer);
      return {
        id: (id!.value as Buffer).toString("hex"),
        label: (label!.value as Buffer).toString("utf8"),
        publicKey: bytesToHex(publicKey),
        address: addressOf(publicKey),
      };
    });
  }

  /** r‖s of a 32-byte hash (CKM_ECDSA), by the private key with CKA_ID `id`. */
  sign(id: string, hash: Uint8Array): Promise<{ r: Uint8Array; s: Uint8Array }> {
    return this.withSession(async (lib, session) => {
      const key = this.handles.get(id) ?? this.privateKey(lib, session, id);
      lib.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, key);
      const signature = await lib.C_SignAsync(session, Buffer.from(hash), Buffer.alloc(72));
      if (signature.length !== 64)
        throw unavailable(`the token answered a ${signature.length}-byte signature`);
      return { r: new Uint8Array(signature.subarray(0, 32)), s: new Uint8Array(signature.subarray(32, 64)) };
    });
  }

  private privateKey(lib: pkcs11js.PKCS11, session: Buffer, id: string): Buffer {
    lib.C_FindObjectsInit(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_ID, value: Buffer.from(id, "hex") },
    ]);
    const [handle] = lib.C_FindObjects(session, 1);
    lib.C_FindObjectsFinal(session);
    if (handle === undefined)
      throw new ChaingateError(`no private key with id ${id} on token "${this.options.token}"`, {
        code: "HSM_KEY_NOT_FOUND",
      });
    this.handles.set(id, handle);
    return handle;
  }
}
