/** The endpoint's events as the relayer reads them: MessageSent on a source, MessageDelivered on a destination. */
import {
  decodeAbiParameters,
  decodeEventLog,
  encodeEventTopics,
  type Hex,
  keccak256,
  numberToHex,
} from "viem";
import { MessageEndpoint } from "../contracts/artifacts.generated.js";
import type { TransportKind } from "../store/schema.js";
import type { Chain } from "../upstream/chain-registry.js";
import { nodeRead, nodeReadOn } from "../upstream/node-reads.js";
import type { SentTransport } from "./transport-row.js";

/** The endpoint's `kind` numbers, in its enum's order. */
export const KINDS: readonly TransportKind[] = ["ERC20", "ERC721", "MESSAGE"];
/** How far back a first scan of a chain (or a search for a delivery) looks. */
export const FIRST_SCAN_DEPTH = 50_000;

export interface Log {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  transactionHash: Hex;
}

const TOKEN_BODY = [
  {
    type: "tuple",
    components: [
      { name: "token", type: "address" },
      { name: "standard", type: "uint8" },
      { name: "name", type: "string" },
      { name: "symbol", type: "string" },
      { name: "decimals", type: "uint8" },
      { name: "baseUri", type: "string" },
      { name: "creator", type: "address" },
      { name: "homeChainId", type: "uint64" },
      { name: "salt", type: "bytes32" },
    ],
  },
  { type: "uint256" },
  { type: "bytes" },
] as const;
const SENT_TOPIC = encodeEventTopics({ abi: MessageEndpoint.abi, eventName: "MessageSent" })[0];

/**
 * MessageSent logs of `endpoint` in blocks from..to (inclusive), as every usable upstream shows them:
 * one upstream hiding a log cannot keep it from being seen, and one forging logs shows them all to
 * the quorum check, which alone decides what is delivered. Throws only when no upstream answers.
 */
export async function sentEvents(chain: Chain, endpoint: Hex, from: number, to: number): Promise<Log[]> {
  const filter = {
    address: endpoint,
    topics: [SENT_TOPIC],
    fromBlock: numberToHex(from),
    toBlock: numberToHex(to),
  };
  const { asked } = chain.pool.quorumView();
  if (asked.length <= 1) return nodeRead(chain, "eth_getLogs", [filter]);
  const answers = await Promise.allSettled(
    asked.map((label) => nodeReadOn(chain, label, "eth_getLogs", [filter])),
  );
  const seen = new Map<string, Log>();
  for (const answer of answers)
    if (answer.status === "fulfilled")
      for (const log of answer.value) seen.set(`${log.transactionHash}|${log.topics?.[1]}|${log.data}`, log);
  if (answers.every((a) => a.status === "rejected")) throw (answers[0] as PromiseRejectedResult).reason;
  return [...seen.values()];
}

/** Whether a log is the endpoint's MessageSent (by its topic; the caller checks the address). */
export function isSentLog(log: { topics?: unknown }): boolean {
  return (
    Array.isArray(log.topics) &&
    typeof log.topics[0] === "string" &&
    log.topics[0].toLowerCase() === SENT_TOPIC
  );
}

/**
 * A MessageSent log as the transport it records, or undefined for a log that does not decode (a
 * node's answer is not trusted to be well formed: one bad log must not stop a scan).
 */
export function transportOfSent(
  chain: Chain,
  log: Log,
): (SentTransport & { body: Hex; source_block: number }) | undefined {
  try {
    return decodeSent(chain, log);
  } catch {
    return undefined;
  }
}

function decodeSent(
  chain: Chain,
  log: Log,
): (SentTransport & { body: Hex; source_block: number }) | undefined {
  const event = decodeEventLog({
    abi: MessageEndpoint.abi,
    eventName: "MessageSent",
    data: log.data,
    topics: log.topics as [Hex],
  });
  if (event.args === undefined) return undefined;
  const { id, destinationChainId, sender, kind, recipient, body } = event.args;
  const transportKind = KINDS[kind] ?? "MESSAGE";
  let token: string | null = null;
  let amount: string | null = null;
  let tokenId: string | null = null;
  let payloadHash: Hex | null = keccak256(body);
  let withData = 0;
  if (transportKind !== "MESSAGE") {
    const [info, value, data] = decodeAbiParameters(TOKEN_BODY, body);
    token = info.token;
    if (transportKind === "ERC20") amount = value.toString();
    else tokenId = value.toString();
    withData = data === "0x" ? 0 : 1;
    payloadHash = data === "0x" ? null : keccak256(data);
  }
  return {
    id,
    kind: transportKind,
    with_data: withData,
    source_chain_id: chain.chainId,
    destination_chain_id: Number(destinationChainId),
    sender,
    recipient,
    token,
    amount,
    token_id: tokenId,
    payload_hash: payloadHash,
    source_tx_hash: log.transactionHash,
    body,
    source_block: Number(BigInt(log.blockNumber)),
  };
}

/** The MessageDelivered event of a transport on its destination, when it was executed there. */
export async function deliveredEvent(
  destination: Chain,
  endpoint: Hex,
  transport: { id: string; source_chain_id: number },
  fromBlock: number,
): Promise<Log | undefined> {
  const logs = await nodeRead(destination, "eth_getLogs", [
    {
      address: endpoint,
      topics: encodeEventTopics({
        abi: MessageEndpoint.abi,
        eventName: "MessageDelivered",
        args: { id: transport.id as Hex, sourceChainId: BigInt(transport.source_chain_id) },
      }),
      fromBlock: numberToHex(fromBlock),
      toBlock: "latest",
    },
  ]);
  return logs.at(-1);
}
