import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText, readConfigFile } from '../../src/resources/config-file.js';
import { EXAMPLE_CONFIG, EXAMPLE_ENV } from '../support/example-config.js';

function problemsOf(yaml: string, env: Record<string, string> = {}): string {
  try {
    parseConfigText(yaml, 'test.yaml', env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const minimal = (extra: string) => `organizations:\n  - id: acme\n${extra}`;

describe('declarative config file', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${VAR} syntax, named in the title.
  it('reads the shipped example with ${VAR} interpolation', () => {
    const config = readConfigFile(EXAMPLE_CONFIG, EXAMPLE_ENV);
    const org = config.organizations[0];
    expect(org?.id).toBe('acme');
    expect(org?.captcha?.secret_key).toBe('0x4AAAAAAAsecret');
    expect(org?.keys?.[1]?.key).toBe(EXAMPLE_ENV.ACME_PRIVATE_KEY);
    expect(org?.services?.[0]?.smtp?.pass).toBe('hunter2');
    expect(org?.templates?.[0]?.params).toHaveLength(3);
  });

  it('names a missing environment variable with its path', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a config file interpolating an unset variable.
    const message = problemsOf(minimal('    captcha: { site_key: "${NOPE_SITE}", secret_key: x }\n'));
    expect(message).toContain('test.yaml');
    expect(message).toContain('organizations/0/captcha/site_key: environment variable NOPE_SITE is not set');
  });

  it('names the file, the path and the problem for schema errors', () => {
    const message = problemsOf(minimal('    plan: platinum\n    credits: -5\n    colour: blue\n'));
    expect(message).toContain('test.yaml');
    expect(message).toMatch(/organizations\/0\/plan/);
    expect(message).toMatch(/organizations\/0\/credits/);
    expect(message).toMatch(/colour/);
  });

  it('refuses unreadable YAML and missing files', () => {
    expect(problemsOf('organizations: [\n')).toMatch(/not valid YAML/);
    expect(() => readConfigFile('/nonexistent/mailroom.yaml')).toThrow(/cannot be read/);
  });

  it('finds what the schema cannot: duplicates, two defaults, broken templates and params', () => {
    const message = problemsOf(`organizations:
  - id: acme
    keys:
      - { type: public, key: sk_wrong_prefix_key }
    services:
      - { id: a, provider: outbox, default: true }
      - { id: a, provider: outbox, default: true }
      - { id: s, provider: smtp }
    templates:
      - id: t
        subject: "{{#if x}}unclosed"
        params:
          - { name: n, type: string, pattern: "([" }
          - { name: n, type: integer, min_length: 1, minimum: 5, maximum: 1 }
  - id: acme
`);
    expect(message).toContain('organizations/0/keys/0/key: a public key must start with pk_');
    expect(message).toContain('organizations/0/services/1/id: service "a" appears twice');
    expect(message).toContain('organizations/0/services: more than one service is marked default');
    expect(message).toContain('organizations/0/services/2: provider smtp needs an smtp block');
    expect(message).toContain('organizations/0/templates/0/subject: is not a valid template');
    expect(message).toContain('organizations/0/templates/0/params/0/pattern: is not a valid regular expression');
    expect(message).toContain('organizations/0/templates/0/params/1/name: "n" is declared twice');
    expect(message).toContain('minimum is greater than maximum');
    expect(message).toContain('organizations/1/id: organization "acme" appears twice');
  });
});
