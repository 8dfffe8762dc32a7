import { describe, expect, it } from 'vitest';
import {
  codeWords,
  fieldsText,
  hasRequestLogFilters,
  NO_REQUEST_LOG_FILTERS,
  requestLogFiltersFromQuery,
  requestLogFiltersToQuery,
  requestLogProblems,
} from '../../ui/src/lib/request-log.js';

describe('the request log page (issue 29)', () => {
  it('reads its filters from the hash, trimmed, and writes only the ones set', () => {
    const f = requestLogFiltersFromQuery(new URLSearchParams('status=422&code=%20recipient_suppressed%20&mode=test'));
    expect(f).toEqual({ ...NO_REQUEST_LOG_FILTERS, status: '422', code: 'recipient_suppressed' });
    expect(requestLogFiltersToQuery(f, 'abc')).toEqual({ status: '422', code: 'recipient_suppressed', cursor: 'abc' });
    expect(hasRequestLogFilters(f)).toBe(true);
    expect(hasRequestLogFilters(NO_REQUEST_LOG_FILTERS)).toBe(false);
  });

  it('says what is wrong with a status or a code before asking the server', () => {
    expect(requestLogProblems({ ...NO_REQUEST_LOG_FILTERS, status: '200', code: 'Bad Code' })).toEqual({
      status: 'A status from 400 to 499, e.g. 422',
      code: 'An error code: lower-case letters and _',
    });
    expect(requestLogProblems({ ...NO_REQUEST_LOG_FILTERS, status: '451' })).toEqual({});
  });

  it('words the codes it knows and shows the others as they are; fields as indented JSON text', () => {
    expect(codeWords('recipient_suppressed')).toBe('Recipient suppressed');
    expect(codeWords('invalid_template_params')).toBe('Template parameters do not match');
    expect(codeWords('something_new')).toBe('something_new');
    expect(fieldsText({ a: '<b>' })).toBe('{\n  "a": "<b>"\n}');
  });
});
