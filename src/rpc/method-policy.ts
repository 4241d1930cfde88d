/** The operator's allow/deny list of node methods: refused calls never reach a node. */
import { ChaingateError } from "../errors/chaingate-error.js";

export type MethodPolicy = (method: string) => boolean;

function matcher(patterns: readonly string[]): MethodPolicy {
  const exact = new Set(patterns.filter((p) => !p.endsWith("*")));
  const prefixes = patterns.filter((p) => p.endsWith("*")).map((p) => p.slice(0, -1));
  return (method) => exact.has(method) || prefixes.some((prefix) => method.startsWith(prefix));
}

/** Deny wins over allow; an empty allow list allows every method of the table. */
export function methodPolicy(allow: readonly string[], deny: readonly string[]): MethodPolicy {
  const allowed = allow.length === 0 ? () => true : matcher(allow);
  const denied = matcher(deny);
  return (method) => allowed(method) && !denied(method);
}

export function methodDenied(method: string): ChaingateError {
  return new ChaingateError(`Method ${method} is not allowed by this gateway's policy`, {
    code: "METHOD_DENIED",
  });
}
