/** A query Kysely compiles once per dialect with slots for its arguments, then runs with new arguments: hot statements skip building and compiling. */
import { type Compilable, CompiledQuery, type DialectAdapter, type Kysely, type QueryResult } from "kysely";
import { nameStatement } from "./named-statements.js";
import type { Database } from "./schema.js";

/** Stands for an argument in the builder; the compiled SQL keeps it as a parameter. */
class Slot {
  constructor(readonly index: number) {}
}

/** In the builder, `slot<T>(i)` stands for the i-th argument (typed as the value it stands for). */
export type SlotOf = <T>(index: number) => T;

type Parameter = { slot: number } | { value: unknown };

interface Compiled {
  sql: string;
  parameters: Parameter[];
}

/**
 * The builder runs once per dialect (the Kysely instance's adapter, which its transactions share)
 * with slots in place of the arguments; every parameter of the compiled SQL is then either a slot
 * (filled from the arguments on each run) or a constant of the builder. A builder whose slots do
 * not all come out as parameters (an argument Kysely would have turned into SQL) is refused at its
 * first run: it is a programming error, found by the first test that runs it. Arguments go to the
 * driver as they are: a null compares as SQL NULL (`= NULL` is never true), so a slot never stands
 * for a value that may be null in a comparison.
 */
export class PreparedQuery<Row> {
  private readonly compiled = new WeakMap<DialectAdapter, Compiled>();

  constructor(private readonly build: (db: Kysely<Database>, slot: SlotOf) => Compilable<Row>) {}

  async execute(db: Kysely<Database>, args: readonly unknown[]): Promise<QueryResult<Row>> {
    return await db.executeQuery<Row>(this.query(db, args));
  }

  /** The statement with `args`, not run (for a caller that runs it as part of another). */
  query(db: Kysely<Database>, args: readonly unknown[]): CompiledQuery<Row> {
    const adapter = db.getExecutor().adapter;
    let compiled = this.compiled.get(adapter);
    if (!compiled) {
      compiled = this.compile(db, args.length);
      this.compiled.set(adapter, compiled);
    }
    const parameters = compiled.parameters.map((p) => ("slot" in p ? args[p.slot] : p.value));
    return CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>;
  }

  private compile(db: Kysely<Database>, arity: number): Compiled {
    const slot: SlotOf = <T>(index: number) => new Slot(index) as T;
    const query = this.build(db, slot).compile();
    const parameters: Parameter[] = query.parameters.map((p) =>
      p instanceof Slot ? { slot: p.index } : { value: p },
    );
    const used = new Set(parameters.flatMap((p) => ("slot" in p ? [p.slot] : [])));
    if (used.size !== arity || [...used].some((i) => i < 0 || i >= arity))
      throw new Error(
        `prepared query: ${arity} arguments, ${used.size} slots compiled as parameters: ${query.sql}`,
      );
    nameStatement(query.sql);
    return { sql: query.sql, parameters };
  }
}
