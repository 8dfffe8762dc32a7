import { Ajv, type Options } from 'ajv';
import formatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Two validators. Bodies are checked as sent: a number where a string belongs is a 400, never
 * silently converted, and unknown fields are kept (the send call ignores them, the admin API's
 * schemas refuse them). Query strings and headers arrive as text, so they are coerced.
 */
function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, removeAdditional: false, ...options });
  // ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
  const addFormats = (formatsModule as unknown as { default: FormatsPlugin }).default;
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const validate = (httpPart === 'body' ? bodyAjv : textAjv).compile(schema);
  return (data: unknown) =>
    validate(data) ? { value: data } : { error: Object.assign(new Error('validation'), { validation: validate.errors }) };
};
