import { Type } from '@sinclair/typebox';
import { ERROR_CATALOG, ERROR_CODES, docsUrlFor, type ErrorCode } from './catalog.js';

/** The spec's error shape; every non-2xx body of the API is one of these. */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
      message: Type.String(),
      docs_url: Type.String({ format: 'uri' }),
      details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    }),
  },
  { $id: 'ErrorEnvelope', description: 'Every error response has this shape' },
);

export interface ErrorBody {
  error: { code: ErrorCode; message: string; docs_url: string; details?: Record<string, unknown> };
}

export function errorBody(docsBase: string, code: ErrorCode, message?: string, details?: Record<string, unknown>): ErrorBody {
  return {
    error: {
      code,
      message: message ?? ERROR_CATALOG[code].message,
      docs_url: docsUrlFor(docsBase, code),
      ...(details !== undefined ? { details } : {}),
    },
  };
}
