import type { Store } from '../../src/storage/store.js';

/**
 * A store whose transactions are watched, for a test that must know what a worker or dispatcher
 * has done before it goes on (its first claim came back, an outcome write was refused) instead
 * of sleeping. Transactions are told apart by the options their callers pass: outcome writes
 * `background: true`, claims and give-backs `durable: false`, everything else none.
 */
export type TransactionKind = 'background' | 'not durable' | 'durable';

export interface SettledTransaction {
  kind: TransactionKind;
  /** What the transaction answered (a claim: the claimed rows); undefined when refused. */
  result: unknown;
  /** Why it was refused; undefined when it committed. */
  error: unknown;
}

export interface WatchedStore {
  store: Store;
  /** Transactions begun, settled or not. */
  readonly started: number;
  /** Transactions of a kind begun, settled or not. */
  startedOf(kind: TransactionKind): number;
  /** Settled transactions, in the order they settled. */
  readonly settled: readonly SettledTransaction[];
  /** Claims (`durable: false`, answering rows) that came back, empty or not. */
  claims(): number;
  /** Refused transactions of a kind. */
  refused(kind: TransactionKind): number;
}

export function watchTransactions(store: Store): WatchedStore {
  const settled: SettledTransaction[] = [];
  const begun: Record<TransactionKind, number> = { background: 0, 'not durable': 0, durable: 0 };
  const transaction: Store['transaction'] = async (fn, options) => {
    const kind: TransactionKind =
      options?.background === true ? 'background' : options?.durable === false ? 'not durable' : 'durable';
    begun[kind] += 1;
    try {
      const result = await store.transaction(fn, options);
      settled.push({ kind, result, error: undefined });
      return result;
    } catch (error) {
      settled.push({ kind, result: undefined, error });
      throw error;
    }
  };
  return {
    store: { ...store, transaction },
    get started() {
      return begun.background + begun['not durable'] + begun.durable;
    },
    startedOf: (kind) => begun[kind],
    settled,
    claims: () => settled.filter((s) => s.kind === 'not durable' && Array.isArray(s.result)).length,
    refused: (kind) => settled.filter((s) => s.kind === kind && s.error !== undefined).length,
  };
}
