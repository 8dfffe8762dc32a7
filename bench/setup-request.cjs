// autocannon worker hook (must be a file in workers mode): a unique Idempotency-Key per
// request, so every request of the benchmark is a new send rather than a replay. With
// BENCH_KEYS_FILE (one private key a line), requests also go round-robin over those keys,
// each with its own organization's key: 300 organizations see equal shares.
'use strict';
const fs = require('node:fs');
const prefix = `b${Math.random().toString(36).slice(2, 10)}`;
const keysFile = process.env.BENCH_KEYS_FILE;
const keys = keysFile ? fs.readFileSync(keysFile, 'utf8').split('\n').filter(Boolean) : [];
let n = 0;
module.exports = (request) => {
  const i = n++;
  const headers = { ...request.headers, 'idempotency-key': `${prefix}-${i}` };
  if (keys.length > 0) headers.authorization = `Bearer ${keys[i % keys.length]}`;
  request.headers = headers;
  return request;
};
