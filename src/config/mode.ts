import type { Config } from './env.js';

/**
 * Which mode runs and what it relaxes, said in the start banner (src/cli/serve.ts) and in the
 * operator UI's header (GET /admin/v1/server): `npm start` runs development mode, and an operator
 * who deploys it as it is must be able to see what that gives away. One list, so the two never
 * disagree with each other or with the code that relaxes (named on each line).
 */
export interface ModeSummary {
  mode: 'development' | 'production';
  /** One sentence per rule that is looser than production's; empty in plain production. */
  relaxed: string[];
}

export function modeSummary(config: Pick<Config, 'env' | 'baseUrl' | 'configFile' | 'webhooks' | 'submission'>): ModeSummary {
  const relaxed: string[] = [];
  const development = config.env === 'development';
  const { allowPrivate } = config.webhooks.urlPolicy;
  if (development) {
    // src/webhooks/url-guard.ts addressRule
    relaxed.push(
      allowPrivate
        ? 'webhook URLs may use http and reach any address, private, ' +
            'link-local and metadata ones included (MAILROOM_WEBHOOK_ALLOW_PRIVATE=true)'
        : 'webhook URLs may use http and reach loopback (private, link-local and metadata addresses stay refused)',
    );
    // src/protection/captcha.ts
    relaxed.push("Cloudflare's CAPTCHA test secrets are accepted");
    // src/admin/session.ts secure()
    if (new URL(config.baseUrl).protocol !== 'https:')
      relaxed.push("the operator UI's session cookie is sent over plain http (not Secure)");
    // src/bootstrap/demo.ts
    if (config.configFile === undefined)
      relaxed.push('a demo organization with keys is created on a first start with an empty database');
    // src/submission/listener.ts allowInsecureAuth
    if (config.submission !== undefined) relaxed.push('SMTP submission accepts AUTH (keys as passwords) before or without TLS');
  } else {
    if (allowPrivate) {
      relaxed.push(
        'webhook URLs may reach private, loopback, link-local and metadata ' +
          'addresses, over http only those (MAILROOM_WEBHOOK_ALLOW_PRIVATE=true)',
      );
    }
    if (config.submission?.allowInsecure === true)
      relaxed.push(
        'SMTP submission accepts AUTH (keys as passwords) before or without TLS (MAILROOM_SUBMISSION_ALLOW_INSECURE=true)',
      );
  }
  return { mode: development ? 'development' : 'production', relaxed };
}

/** The banner's lines: the mode, then each relaxation, then how to leave development. */
export function modeBanner(summary: ModeSummary): string[] {
  if (summary.mode === 'production') {
    return summary.relaxed.length === 0
      ? ['mode: production']
      : ['mode: production, relaxed:', ...summary.relaxed.map((r) => `  - ${r}`)];
  }
  return [
    'mode: development (MAILROOM_ENV), which relaxes:',
    ...summary.relaxed.map((r) => `  - ${r}`),
    '  set MAILROOM_ENV=production on a server others can reach',
  ];
}
