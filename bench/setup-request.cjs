// autocannon worker hook (must be a file in workers mode): a unique Idempotency-Key per
// request, so every request of the benchmark is a new send rather than a replay.
'use strict';
const prefix = `b${Math.random().toString(36).slice(2, 10)}`;
let n = 0;
module.exports = (request) => {
  request.headers = { ...request.headers, 'idempotency-key': `${prefix}-${n++}` };
  return request;
};
