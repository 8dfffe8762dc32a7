import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const EXAMPLE_CONFIG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/mailroom.yaml');

/** The secrets examples/mailroom.yaml reads from the environment. */
export const EXAMPLE_ENV = {
  ACME_TURNSTILE_SITE_KEY: '0x4AAAAAAAsite',
  ACME_TURNSTILE_SECRET_KEY: '0x4AAAAAAAsecret',
  ACME_PRIVATE_KEY: 'sk_acme_private_example_0123456789',
  ACME_SMTP_PASS: 'hunter2',
};
