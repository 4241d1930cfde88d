import { expect, it } from "vitest";
import { FairGate } from "./fair-gate.js";

/** A task that finishes when the test says so. */
function gated() {
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { done, finish };
}

it("a tenant that arrives during another's flood gets the next permit, not the back of the queue", async () => {
  const gate = new FairGate({ permits: 2, perTenant: 16, queue: 256 });
  const started: string[] = [];
  const tasks = new Map<string, ReturnType<typeof gated>>();
  const run = (tenant: string, name: string) =>
    gate.run(tenant, async () => {
      started.push(name);
      const task = gated();
      tasks.set(name, task);
      await task.done;
    });
  const flood = Array.from({ length: 10 }, (_, i) => run("a", `a${i}`));
  const victim = run("b", "b0");
  await new Promise((r) => setTimeout(r, 0));
  expect(started).toEqual(["a0", "a1"]);
  tasks.get("a0")!.finish();
  await new Promise((r) => setTimeout(r, 0));
  // b has nothing running and a has one: b goes next.
  expect(started).toEqual(["a0", "a1", "b0"]);
  for (let i = 1; i < 10; i++) {
    tasks.get(`a${i}`)?.finish();
    tasks.get("b0")?.finish();
    await new Promise((r) => setTimeout(r, 0));
  }
  for (const task of tasks.values()) task.finish();
  await Promise.all([...flood, victim]);
  expect(started).toHaveLength(11);
});

it("refuses a tenant past its share with a retryable 429, and anyone past the whole queue with a 503", async () => {
  // (The keyless mode's single user, tenant "", has no share of its own: only the whole queue bounds it.)
  const gate = new FairGate({ permits: 1, perTenant: 2, queue: 2 });
  const hold = gated();
  const first = gate.run("a", () => hold.done);
  const second = gate.run("a", () => Promise.resolve());
  await expect(gate.run("a", () => Promise.resolve())).rejects.toMatchObject({
    code: "KDF_BUSY",
    status: 429,
  });
  const third = gate.run("b", () => Promise.resolve());
  await expect(gate.run("c", () => Promise.resolve())).rejects.toMatchObject({
    code: "KDF_BUSY",
    status: 503,
  });
  expect(gate.waiting).toBe(2);
  hold.finish();
  await Promise.all([first, second, third]);
  expect(gate.waiting).toBe(0);
});

it("gives the permit and the tenant's share back from a task that throws, rejects or resolves, run at once or after waiting", async () => {
  const gate = new FairGate({ permits: 1, perTenant: 1, queue: 4 });
  const boom = new Error("boom");
  // At once: a throw before the task's promise, then a rejection, then a value; each frees the one permit.
  await expect(
    gate.run("a", () => {
      throw boom;
    }),
  ).rejects.toBe(boom);
  await expect(gate.run("a", () => Promise.reject(boom))).rejects.toBe(boom);
  await expect(gate.run("a", () => Promise.resolve(7))).resolves.toBe(7);
  // After waiting: b and c queue behind a held permit; each failure hands the permit on.
  const hold = gated();
  const held = gate.run("a", () => hold.done);
  const thrown = gate.run("b", () => {
    throw boom;
  });
  const rejected = gate.run("c", () => Promise.reject(boom));
  expect(gate.waiting).toBe(2);
  hold.finish();
  await held;
  await expect(thrown).rejects.toBe(boom);
  await expect(rejected).rejects.toBe(boom);
  expect(gate.waiting).toBe(0);
  // Every share was given back (perTenant 1 would refuse a tenant still holding one), and the permit is free.
  const after = await Promise.all(["a", "b", "c"].map((t) => gate.run(t, () => Promise.resolve(t))));
  expect(after).toEqual(["a", "b", "c"]);
  const free = gated();
  const running = gate.run("d", () => free.done);
  expect(gate.waiting).toBe(0);
  free.finish();
  await running;
});
