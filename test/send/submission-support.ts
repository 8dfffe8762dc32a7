/**
 * Moved to test/support/submission.ts (review D §3.4); test/delivery/submitted*.test.ts still
 * import from here until their import lines move too.
 */
export { BASIC_HEADERS, callerOf, CLIENT, depsFor, message, refusal, submit, TEST_MODE_KEY } from '../support/submission.js';
