// Per-statement SQLite timing for a running `mailroom serve` (or any process using
// better-sqlite3): load it with `--require`, e.g.
//   BENCH_ONLY=send BENCH_SEND_WORKER=off BENCH_NODE_ARGS="--require ./bench/sql-trace.cjs" npm run bench
// At exit it writes, per process and thread, how often each statement ran and the time spent
// in it (run/all/get/iterate; prepare excluded), slowest total first, to
// $SQL_TRACE_DIR (default the system temp folder)/sql-trace-PID-THREAD.txt. The wrapping
// costs a few µs a statement: read the shares, not the absolute figures. A bench tool only.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { threadId } = require('node:worker_threads');
const Database = require('better-sqlite3');

const stats = new Map();
function count(key, micros) {
  const s = stats.get(key) ?? { n: 0, us: 0 };
  s.n += 1;
  s.us += micros;
  stats.set(key, s);
}
const since = (t) => Number(process.hrtime.bigint() - t) / 1000;
const keyOf = (text) => text.replace(/\s+/g, ' ').trim().slice(0, 160);

let wrapped = false;
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function prepareTraced(...args) {
  const statement = prepare.apply(this, args);
  if (!wrapped) {
    // Every statement shares one prototype: wrap its methods once.
    wrapped = true;
    const proto = Object.getPrototypeOf(statement);
    for (const name of ['run', 'all', 'get', 'iterate']) {
      const original = proto[name];
      proto[name] = function traced(...a) {
        const t = process.hrtime.bigint();
        try {
          return original.apply(this, a);
        } finally {
          count(keyOf(this.source), since(t));
        }
      };
    }
  }
  return statement;
};
const exec = Database.prototype.exec;
Database.prototype.exec = function execTraced(text) {
  const t = process.hrtime.bigint();
  try {
    return exec.call(this, text);
  } finally {
    count(`exec: ${keyOf(text)}`, since(t));
  }
};

process.on('exit', () => {
  if (stats.size === 0) return;
  const rows = [...stats].sort((a, b) => b[1].us - a[1].us);
  const lines = rows.map(
    ([text, s]) =>
      `${String(s.n).padStart(9)} ${(s.us / 1000).toFixed(0).padStart(8)} ms ${(s.us / s.n).toFixed(1).padStart(8)} µs  ${text}`,
  );
  const file = path.join(process.env.SQL_TRACE_DIR ?? os.tmpdir(), `sql-trace-${process.pid}-${threadId}.txt`);
  fs.writeFileSync(file, `    calls    total     each  statement\n${lines.join('\n')}\n`);
});
